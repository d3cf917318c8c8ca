import "../helpers/python-without-shim.js"; // python3 (moto) without a version manager's shim (see there)
import { createHash, randomBytes } from "node:crypto";
import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { promisify } from "node:util";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { applyTarget, applyWrites } from "../../src/apply/apply-write.js";
import type { PutWrite } from "../../src/domain/release-plan.js";
import { createFolderStore } from "../../src/store/folder-store.js";
import type { ObjectStore } from "../../src/store/object-store.js";
import { openStore } from "../../src/store/open-store.js";
import { MOTO_ENV } from "../helpers/moto-server.js";
import { useMotoServer } from "../helpers/s3-workspace.js";

const IMMUTABLE = "public, max-age=31536000, immutable";

/** The create-only put a publish plans for a versioned object. */
function recordWrite(key: string, bytes: Buffer): PutWrite {
  return {
    step: "record", op: "put", key, source: { kind: "bytes", bytes }, sizeBytes: bytes.length, sha256: createHash("sha256").update(bytes).digest("hex"),
    contentType: "application/json", cacheControl: IMMUTABLE, precondition: { kind: "create-only" }, needed: true, why: "new",
  };
}

/** The object as the aws cli reads it (not through relcast's S3 client): its headers, ETag and bytes. */
async function awsGet(endpoint: string, bucket: string, key: string, dir: string): Promise<{ type: string; cache: string | undefined; etag: string; body: Buffer }> {
  const out = path.join(dir, `aws-${randomBytes(4).toString("hex")}`);
  const { stdout } = await promisify(execFile)("aws", ["--endpoint-url", endpoint, "s3api", "get-object", "--bucket", bucket, "--key", `site/${key}`, out], { env: { ...process.env, ...MOTO_ENV } });
  const meta = JSON.parse(stdout) as { ContentType: string; CacheControl?: string; ETag: string };
  return { type: meta.ContentType, cache: meta.CacheControl, etag: meta.ETag, body: await readFile(out) };
}

describe("a create-only put that finds the same bytes already there", () => {
  const moto = useMotoServer();
  let dir: string;
  let store: ObjectStore;
  let bucket: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), "relcast-create-only-"));
    bucket = `create-only-${randomBytes(3).toString("hex")}`;
    await fetch(`${moto.server.endpoint}/${bucket}`, { method: "PUT" });
    store = await openStore(`s3://${bucket}/site`, dir, { s3: { endpoint: moto.server.endpoint, forcePathStyle: true, region: "us-east-1" } });
  });
  afterAll(async () => {
    await store?.close?.();
    await rm(dir, { recursive: true, force: true });
  });

  const writeTemp = async (bytes: Buffer) => {
    const file = path.join(dir, `body-${randomBytes(4).toString("hex")}`);
    await writeFile(file, bytes);
    return file;
  };
  const run = async (w: PutWrite) => {
    const lines: string[] = [];
    const t = applyTarget(store, (l) => lines.push(l));
    await applyWrites(t, [w]);
    return { lines, t };
  };

  // The object may be the release of a run that won the race (with another cacheControl setting): a rewrite in place
  // would change its ETag under that run's pinned copies and leave this run's headers on its release.
  it("with other headers (S3): E_CONFLICT naming them and the aws fix; the object, its headers and its ETag are left alone", async () => {
    const bytes = Buffer.from('{"version":"1.2.0"}\n');
    await store.put("releases/1.2.0/release.json", bytes, { contentType: "text/plain", cacheControl: "no-cache" });
    const before = await awsGet(moto.server.endpoint, bucket, "releases/1.2.0/release.json", dir);
    const failed = run(recordWrite("releases/1.2.0/release.json", bytes));
    await expect(failed).rejects.toMatchObject({ code: "E_CONFLICT" });
    const err = (await failed.catch((e: unknown) => e)) as { message: string; hint: string };
    expect(err.message).toMatch(/release\.json is already there with the same bytes but Content-Type "text\/plain" \(relcast writes "application\/json"\) and Cache-Control "no-cache" \(relcast writes "public, max-age=31536000, immutable"\); relcast left it as it is/);
    expect(err.hint).toMatch(/aws s3 cp s3:\/\/\S+\/site\/releases\/1\.2\.0\/release\.json \S+ --metadata-directive REPLACE --content-type "application\/json" --cache-control "public, max-age=31536000, immutable"/);
    expect(await awsGet(moto.server.endpoint, bucket, "releases/1.2.0/release.json", dir)).toEqual(before);
  });

  it("the same bytes with a header relcast never writes (Content-Encoding: gzip): E_CONFLICT, not kept silently, left alone", async () => {
    const bytes = Buffer.from('{"version":"1.2.1"}\n');
    const key = "site/releases/1.2.1/release.json";
    await promisify(execFile)("aws", ["--endpoint-url", moto.server.endpoint, "s3api", "put-object", "--bucket", bucket, "--key", key, "--body", await writeTemp(bytes),
      "--content-type", "application/json", "--cache-control", IMMUTABLE, "--content-encoding", "gzip"], { env: { ...process.env, ...MOTO_ENV } });
    const before = await awsGet(moto.server.endpoint, bucket, "releases/1.2.1/release.json", dir);
    const failed = run(recordWrite("releases/1.2.1/release.json", bytes));
    await expect(failed).rejects.toMatchObject({ code: "E_CONFLICT", message: expect.stringMatching(/Content-Encoding "gzip" \(relcast writes none\)/) });
    expect(await awsGet(moto.server.endpoint, bucket, "releases/1.2.1/release.json", dir)).toEqual(before);
  });

  it("with the same headers: kept as it is, nothing written", async () => {
    const bytes = Buffer.from('{"version":"1.3.0"}\n');
    await store.put("releases/1.3.0/release.json", bytes, { contentType: "application/json", cacheControl: IMMUTABLE });
    const before = await store.head("releases/1.3.0/release.json");
    const { lines, t } = await run(recordWrite("releases/1.3.0/release.json", bytes));
    expect(lines).toEqual(["releases/1.3.0/release.json was written meanwhile with the same bytes; keeping it"]);
    expect(t.written).toEqual([]);
    expect(await store.head("releases/1.3.0/release.json")).toEqual(before);
  });

  it("other bytes: E_CONFLICT, and the object and its headers are left alone", async () => {
    await store.put("releases/1.4.0/release.json", '{"other":true}\n', { contentType: "text/plain", cacheControl: "no-cache" });
    await expect(run(recordWrite("releases/1.4.0/release.json", Buffer.from('{"version":"1.4.0"}\n')))).rejects.toMatchObject({ code: "E_CONFLICT" });
    expect(await awsGet(moto.server.endpoint, bucket, "releases/1.4.0/release.json", dir)).toMatchObject({ type: "text/plain", cache: "no-cache", body: Buffer.from('{"other":true}\n') });
  });

  it("the folder store keeps no headers: the same bytes are kept, nothing copied", async () => {
    const folder = createFolderStore(path.join(dir, "folder"));
    const bytes = Buffer.from('{"version":"1.5.0"}\n');
    await folder.put("releases/1.5.0/release.json", bytes, { contentType: "text/plain", cacheControl: "no-cache" });
    const before = await folder.head("releases/1.5.0/release.json");
    const lines: string[] = [];
    await applyWrites(applyTarget(folder, (l) => lines.push(l)), [recordWrite("releases/1.5.0/release.json", bytes)]);
    expect(lines).toEqual(["releases/1.5.0/release.json was written meanwhile with the same bytes; keeping it"]);
    expect(await folder.head("releases/1.5.0/release.json")).toEqual(before);
  });
});
