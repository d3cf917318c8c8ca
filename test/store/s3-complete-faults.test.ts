import { createHash, randomBytes } from "node:crypto";
import { writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PreconditionFailedError, RelcastError } from "../../src/core/errors.js";
import { createS3Store } from "../../src/store/s3-store.js";
import { startFaultProxy, type FaultProxy, type RequestInfo } from "../helpers/fault-proxy.js";
import { startS3Probe, type S3Probe } from "../helpers/boto3-probe.js";
import { motoUnavailableReason, startMotoServer, type MotoServer } from "../helpers/moto-server.js";
import { bucketReader, type BucketReader } from "../helpers/moto-http.js";

/**
 * A CompleteMultipartUpload that made the object but answered 500 (moto
 * answers an HTML page when its handler fails midway): the SDK retries it,
 * and the retry meets either the server's idempotent answer (moto) or
 * NoSuchUpload (the upload is gone: S3 may answer so). Either way the object
 * is this upload's own: the put succeeds with its ETag, the bytes are the
 * file's (read back over plain HTTP, past the SDK), and no upload is left open.
 * Headers and open uploads are read with boto3 (one Python for the file, not
 * an aws cli start per check). 10 MiB + a few bytes in 5 MiB parts is three
 * parts, the last one short, as the 12 MiB these once used.
 */
const BUCKET = "relcast-completes";
const MiB = 1024 * 1024;
const reason = motoUnavailableReason();
let moto: MotoServer | undefined;
let proxy: FaultProxy | undefined;
let probe: S3Probe | undefined;
let reader: BucketReader | undefined;

const headObject = (key: string) => probe!.call<{ ETag: string; ContentType: string; CacheControl?: string }>("head_object", { Bucket: BUCKET, Key: key });
const openUploads = async (prefix: string) => (await probe!.call<{ Uploads?: unknown[] }>("list_multipart_uploads", { Bucket: BUCKET, Prefix: `${prefix}/` })).Uploads ?? [];
const sha256 = (b: Buffer) => createHash("sha256").update(b).digest("hex");
const isComplete = (key: string) => (r: RequestInfo) => r.method === "POST" && r.url.includes(`${key}?uploadId=`);

if (reason) console.warn(`S3 Complete fault tests skipped: ${reason}`);
describe.skipIf(Boolean(reason))("S3 store: a CompleteMultipartUpload that made the object but answered 500", () => {
  beforeAll(async () => {
    moto = await startMotoServer();
    proxy = await startFaultProxy(moto.endpoint, { rate: 0, seed: 3 });
    probe = startS3Probe(moto.endpoint);
    reader = bucketReader(moto.endpoint, BUCKET);
    await probe.call("create_bucket", { Bucket: BUCKET });
  });
  afterAll(async () => {
    await probe?.close();
    await proxy?.stop();
    await moto?.stop();
  });

  it.each([
    ["the retry gets the server's idempotent answer", undefined],
    ["the retry gets NoSuchUpload", "404-no-such-upload" as const],
  ])("staged (a publish's disk image), %s: the put succeeds with the object's ETag, nothing left open", async (_name, retryFault) => {
    const prefix = `p-${randomBytes(4).toString("hex")}`;
    const store = createS3Store({ bucket: BUCKET, prefix, region: "us-east-1", endpoint: proxy!.endpoint, forcePathStyle: true, partSizeBytes: 5 * MiB, queueSize: 2 });
    const file = path.join(os.tmpdir(), `${prefix}.dmg`);
    const data = randomBytes(10 * MiB + 5);
    await writeFile(file, data);
    const key = "releases/1.0.0/big.dmg";
    try {
      proxy!.target({ name: `${prefix} made, answered 500`, match: isComplete(`${prefix}/${key}`), fault: "500-after-applied" });
      if (retryFault) proxy!.target({ name: `${prefix} retry`, match: isComplete(`${prefix}/${key}`), fault: retryFault, times: 10 });
      store.stage!(key, file, { contentType: "application/x-apple-diskimage" });
      const { etag } = await store.put(key, { file }, { contentType: "application/x-apple-diskimage", ifNoneMatch: "*" });
      expect(proxy!.stats.targeted[`${prefix} made, answered 500`]).toBe(1);
      if (retryFault) expect(proxy!.stats.targeted[`${prefix} retry`]).toBeGreaterThan(0);
      const head = await headObject(`${prefix}/${key}`);
      expect(head.ETag).toBe(etag);
      expect(etag).toMatch(/-3"$/);
      expect(await reader!.sha256(`${prefix}/${key}`)).toBe(sha256(data));
      // One Complete made it; the parts were not sent again (no second upload).
      expect(proxy!.seen.filter((r) => r.method === "POST" && r.url.includes(`${prefix}/${key}?uploads`))).toHaveLength(1);
      expect(await openUploads(prefix)).toEqual([]);
    } finally {
      proxy!.clearTargets();
      await store.close?.();
    }
  });

  it("a file put at once (not staged), the retry gets NoSuchUpload: the put succeeds, the object is the file", async () => {
    const prefix = `p-${randomBytes(4).toString("hex")}`;
    const store = createS3Store({ bucket: BUCKET, prefix, region: "us-east-1", endpoint: proxy!.endpoint, forcePathStyle: true, partSizeBytes: 5 * MiB, queueSize: 2 });
    const file = path.join(os.tmpdir(), `${prefix}.zip`);
    const data = randomBytes(10 * MiB + 1);
    await writeFile(file, data);
    const key = "releases/1.0.0/big.zip";
    try {
      proxy!.target({ name: `${prefix} made`, match: isComplete(`${prefix}/${key}`), fault: "500-after-applied" });
      proxy!.target({ name: `${prefix} retry`, match: isComplete(`${prefix}/${key}`), fault: "404-no-such-upload", times: 10 });
      const { etag } = await store.put(key, { file }, { contentType: "application/zip", ifNoneMatch: "*" });
      expect((await store.head(key))?.etag).toBe(etag);
      expect(await reader!.sha256(`${prefix}/${key}`)).toBe(sha256(data));
    } finally {
      proxy!.clearTargets();
      await store.close?.();
    }
  });

  describe("a Complete that meets NoSuchUpload where another writer's object is (or nothing is)", () => {
    // Another writer puts the same bytes with the same part size (so the same multipart ETag) while this store's
    // Complete is held; the Complete then gets NoSuchUpload. The object there is not this upload's: its headers differ.
    async function raced(o: { staged: boolean; ifNoneMatch: boolean }) {
      const prefix = `p-${randomBytes(4).toString("hex")}`;
      const base = { bucket: BUCKET, prefix, region: "us-east-1", forcePathStyle: true, partSizeBytes: 5 * MiB, queueSize: 2 };
      const store = createS3Store({ ...base, endpoint: proxy!.endpoint });
      const other = createS3Store({ ...base, endpoint: moto!.endpoint, conditionalWrites: "unverified-single-writer", onWarning: () => undefined });
      const file = path.join(os.tmpdir(), `${prefix}.zip`);
      await writeFile(file, randomBytes(10 * MiB + 3));
      const key = "releases/9.0.0/x.zip";
      try {
        const held = proxy!.hold(isComplete(`${prefix}/${key}`));
        proxy!.target({ name: `${prefix} gone`, match: isComplete(`${prefix}/${key}`), fault: "404-no-such-upload", times: 1 });
        const headers = { contentType: "application/zip", cacheControl: "public, max-age=31536000, immutable" };
        if (o.staged) store.stage!(key, file, headers);
        const putting = store.put(key, { file }, { ...headers, ...(o.ifNoneMatch && { ifNoneMatch: "*" as const }) }).then((x) => x, (e: unknown) => e);
        await held.arrived;
        await other.put(key, { file }, { contentType: "text/html", cacheControl: "no-store" });
        held.release();
        const outcome = await putting;
        const head = await headObject(`${prefix}/${key}`);
        return { outcome, head, open: await openUploads(prefix) };
      } finally {
        proxy!.clearTargets();
        await store.close?.();
        await other.close?.();
      }
    }

    it.each([["a file put at once", false], ["a staged upload", true]])("%s, create-only: the put loses its condition (the object is another writer's), not success", async (_name, staged) => {
      const { outcome, head, open } = await raced({ staged, ifNoneMatch: true });
      expect(outcome).toBeInstanceOf(PreconditionFailedError);
      expect((outcome as PreconditionFailedError).key).toBe("releases/9.0.0/x.zip");
      // The other writer's object stays as it was.
      expect(head.ContentType).toBe("text/html");
      expect(head.CacheControl).toBe("no-store");
      expect(open).toEqual([]);
    });

    it("a file put at once, unconditional: E_STORE says the key was written meanwhile by another writer", async () => {
      const { outcome, head } = await raced({ staged: false, ifNoneMatch: false });
      expect(outcome).toBeInstanceOf(RelcastError);
      expect((outcome as RelcastError).message).toMatch(/x\.zip was written meanwhile by another writer: .*NoSuchUpload.*the same bytes but other headers.*text\/html.*this upload wrote nothing/);
      expect(head.ContentType).toBe("text/html");
    });

    it("NoSuchUpload and no object at the key: E_STORE says nothing was written, why, and to run the command again", async () => {
      const prefix = `p-${randomBytes(4).toString("hex")}`;
      const store = createS3Store({ bucket: BUCKET, prefix, region: "us-east-1", endpoint: proxy!.endpoint, forcePathStyle: true, partSizeBytes: 5 * MiB, queueSize: 2 });
      const file = path.join(os.tmpdir(), `${prefix}.zip`);
      await writeFile(file, randomBytes(10 * MiB + 1));
      const key = "releases/1.0.0/gone.zip";
      try {
        proxy!.target({ name: `${prefix} gone`, match: isComplete(`${prefix}/${key}`), fault: "404-no-such-upload", times: 10 });
        const err = await store.put(key, { file }, { contentType: "application/zip", ifNoneMatch: "*" }).then(() => undefined, (e: unknown) => e);
        expect(err).toBeInstanceOf(RelcastError);
        expect((err as RelcastError).code).toBe("E_STORE");
        expect((err as RelcastError).message).toMatch(/NoSuchUpload.*aborted before it was completed, and nothing was written/);
        expect((err as RelcastError).hint).toMatch(/relcast gc.*run the same command again/);
        expect((err as RelcastError).hint).not.toMatch(/error code above/);
        expect(await store.head(key)).toBeUndefined();
      } finally {
        proxy!.clearTargets();
        await store.close?.();
      }
    });
  });
});
