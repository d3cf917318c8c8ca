import { randomBytes } from "node:crypto";
import { writeFile, mkdtemp, rm } from "node:fs/promises";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RelcastError } from "../../src/core/errors.js";
import { CACHE_IMMUTABLE } from "../../src/store/content-types.js";
import { openStore } from "../../src/store/open-store.js";
import { createS3Store } from "../../src/store/s3-store.js";
import type { S3StoreOptions, UploadProgress } from "../../src/store/s3-options.js";
import { startFaultProxy } from "../helpers/fault-proxy.js";
import { motoUnavailableReason, startMotoServer, type MotoServer } from "../helpers/moto-server.js";
import { startS3Probe, type S3Probe } from "../helpers/boto3-probe.js";
import { runStoreContract } from "./store-contract.js";

const BUCKET = "relcast-contract";
const reason = motoUnavailableReason();
let moto: MotoServer | undefined;
/** What the bucket holds, as an independent client (Python's boto3) sees it: one process for the file's checks. */
let probe: S3Probe | undefined;

function s3<T = Record<string, unknown>>(op: string, args: Record<string, unknown>): Promise<T> {
  return probe!.call<T>(op, { Bucket: BUCKET, ...args });
}

function storeOptions(extra: Partial<S3StoreOptions> = {}): S3StoreOptions {
  return {
    bucket: BUCKET,
    prefix: `t-${randomBytes(4).toString("hex")}`,
    region: "us-east-1",
    endpoint: moto!.endpoint,
    forcePathStyle: true,
    partSizeBytes: 5 * 1024 * 1024,
    queueSize: 4,
    ...extra,
  };
}

if (reason) console.warn(`S3 store tests skipped: ${reason}`);
describe.skipIf(Boolean(reason))(`S3 store against moto_server${reason ? ` (skipped: ${reason})` : ""}`, () => {
  beforeAll(async () => {
    moto = await startMotoServer();
    probe = startS3Probe(moto.endpoint);
    await s3("create_bucket", {});
  });
  afterAll(async () => {
    await probe?.close();
    await moto?.stop();
  });

  runStoreContract("s3 (moto)", async () => createS3Store(storeOptions()), { report: (line) => console.log(line) });

  describe("S3 store specifics against moto_server", () => {
    it("is visible to an independent client (boto3) with the ContentType and CacheControl it was put with", async () => {
      const options = storeOptions();
      const store = createS3Store(options);
      await store.put("releases/1.0.0/p.dmg", "dmg bytes", { contentType: "application/x-apple-diskimage", cacheControl: CACHE_IMMUTABLE });
      const head = await s3("head_object", { Key: `${options.prefix}/releases/1.0.0/p.dmg` });
      expect(head.ContentType).toBe("application/x-apple-diskimage");
      expect(head.CacheControl).toBe(CACHE_IMMUTABLE);
      expect(head.ContentLength).toBe(9);
      expect(store.uriFor("releases/1.0.0/p.dmg")).toBe(`s3://${BUCKET}/${options.prefix}/releases/1.0.0/p.dmg`);
      await store.close?.();
    });

    it("uploads a file in parallel parts, reports progress, and leaves no parts after a lost create", async () => {
      const progress: UploadProgress[] = [];
      const options = storeOptions({ onProgress: (p) => progress.push(p) });
      const store = createS3Store(options);
      const dir = await mkdtemp(path.join(tmpdir(), "relcast-s3-"));
      try {
        const file = path.join(dir, "p.dmg");
        // 10 MiB and a byte in 5 MiB parts: three parts, the last one short.
        await writeFile(file, randomBytes(10 * 1024 * 1024 + 1));
        const { etag } = await store.put("releases/1.0.0/p.dmg", { file }, { contentType: "application/x-apple-diskimage", ifNoneMatch: "*" });
        expect(etag).toMatch(/-3"?$/); // multipart ETag: md5-of-parts "-<partCount>"
        expect(progress.at(-1)).toMatchObject({ key: "releases/1.0.0/p.dmg", loaded: 10 * 1024 * 1024 + 1, total: 10 * 1024 * 1024 + 1 });
        await expect(store.put("releases/1.0.0/p.dmg", { file }, { contentType: "application/x-apple-diskimage", ifNoneMatch: "*" })).rejects.toThrow(/precondition/);
        const pending = await s3<{ Uploads?: unknown[] }>("list_multipart_uploads", { Prefix: `${options.prefix}/` });
        expect(pending.Uploads ?? []).toHaveLength(0);
      } finally {
        await rm(dir, { recursive: true, force: true });
        await store.close?.();
      }
    });

    it("reuses connections for multipart parts (the SDK's own agent opened one per part)", async () => {
      // moto closes every connection, so a proxy that keeps them open stands in for S3.
      const upstream = new URL(moto!.endpoint);
      const upAgent = new http.Agent({ keepAlive: true });
      let requests = 0;
      const connections = new Set<unknown>();
      const proxy = http.createServer((req, res) => {
        requests++;
        connections.add(req.socket);
        const forward = http.request({ host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers: req.headers, agent: upAgent }, (upRes) => {
          const headers = { ...upRes.headers };
          delete headers.connection;
          res.writeHead(upRes.statusCode ?? 502, headers);
          upRes.pipe(res);
        });
        req.pipe(forward);
      });
      await new Promise<void>((resolve) => proxy.listen(0, "127.0.0.1", resolve));
      const store = createS3Store(storeOptions({ endpoint: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`, queueSize: 2 }));
      const dir = await mkdtemp(path.join(tmpdir(), "relcast-s3-"));
      try {
        const file = path.join(dir, "p.dmg");
        // Six parts (the last one a byte), two in flight: parts must go over connections used before.
        await writeFile(file, randomBytes(25 * 1024 * 1024 + 1));
        await store.proveConditionalWrites!(); // the store's first write waits for it; counted apart
        requests = 0;
        connections.clear();
        await store.put("releases/1.0.0/p.dmg", { file }, { contentType: "application/x-apple-diskimage" });
        expect(requests).toBe(8); // create, 6 parts, complete
        expect(connections.size).toBeLessThanOrEqual(3); // two parts in flight, plus a spare
      } finally {
        await rm(dir, { recursive: true, force: true });
        await store.close?.();
        upAgent.destroy();
        proxy.closeAllConnections();
        await new Promise((resolve) => proxy.close(resolve));
      }
    });

    it("aborts stale incomplete multipart uploads under its prefix only", async () => {
      const options = storeOptions();
      const store = createS3Store(options);
      await s3("create_multipart_upload", { Key: `${options.prefix}/releases/9.9.9/p.dmg` });
      await s3("create_multipart_upload", { Key: `elsewhere-${options.prefix}/p.dmg` });
      const sweep = await store.abortStaleUploads(new Date(Date.now() + 60_000));
      expect(sweep.aborted.map((a) => a.key)).toEqual([`${options.prefix}/releases/9.9.9/p.dmg`]);
      const left = await s3<{ Uploads?: { Key: string }[] }>("list_multipart_uploads", {});
      expect(left.Uploads?.map((u) => u.Key)).toContain(`elsewhere-${options.prefix}/p.dmg`);
      expect((await store.abortStaleUploads(new Date(0))).aborted).toHaveLength(0);
      await store.close?.();
    });

    it("opens through openStore(s3://bucket/prefix) with the config's s3 settings", async () => {
      const store = await openStore(`s3://${BUCKET}/via-open-store/`, process.cwd(), {
        s3: { region: "us-east-1", endpoint: moto!.endpoint, forcePathStyle: true, requestChecksumCalculation: "WHEN_REQUIRED" },
      });
      expect(store.location).toEqual({ scheme: "s3", bucket: BUCKET, prefix: "via-open-store" });
      await store.checkReachable();
      await store.put("releases/appcast.xml", "<rss/>", { contentType: "application/xml", cacheControl: "no-cache" });
      expect(store.uriFor("releases/appcast.xml")).toBe(`s3://${BUCKET}/via-open-store/releases/appcast.xml`);
      const head = await s3("head_object", { Key: "via-open-store/releases/appcast.xml" });
      expect(head.ContentType).toBe("application/xml");
      expect(head.CacheControl).toBe("no-cache");
      await store.close?.();
    });

    it("explains a missing bucket (E_STORE) and an unreachable endpoint (E_NETWORK) with a fix", async () => {
      const missing = createS3Store(storeOptions({ bucket: "no-such-bucket-here" }));
      const err = await missing.checkReachable().catch((e: unknown) => e);
      expect(err).toBeInstanceOf(RelcastError);
      expect((err as RelcastError).code).toBe("E_STORE");
      expect((err as RelcastError).message).toMatch(/bucket "no-such-bucket-here" does not exist/);
      expect((err as RelcastError).hint).toMatch(/create the bucket/);

      const closed = createS3Store(storeOptions({ endpoint: "http://127.0.0.1:9" }));
      const down = await closed.checkReachable().catch((e: unknown) => e);
      expect((down as RelcastError).code).toBe("E_NETWORK");
      expect((down as RelcastError).exitCode).toBe(13);
      expect((down as RelcastError).message).toMatch(/unreachable/);
      expect((down as RelcastError).hint).toMatch(/s3\.endpoint/);
      await missing.close?.();
      await closed.close?.();
    });

    describe("staged uploads (store.stage, then put completes them)", () => {
      const MiB = 1024 * 1024;
      const openUploads = async (prefix: string) =>
        (await s3<{ Uploads?: { Key: string }[] }>("list_multipart_uploads", { Prefix: `${prefix}/` })).Uploads ?? [];
      async function bigFile(bytes: number): Promise<{ file: string; data: Buffer; dir: string }> {
        const dir = await mkdtemp(path.join(tmpdir(), "staged-"));
        const data = randomBytes(bytes);
        const file = path.join(dir, "big.bin");
        await writeFile(file, data);
        return { file, data, dir };
      }
      const options = { contentType: "application/zip", cacheControl: CACHE_IMMUTABLE };

      it("a put of the staged file completes the staged upload under its create-only condition: the object's bytes and headers are the file's", async () => {
        const o = storeOptions();
        const store = createS3Store(o);
        const { file, data, dir } = await bigFile(10 * MiB + 1);
        try {
          store.stage!("releases/1.0.0/a.zip", file, options);
          await store.put("releases/1.0.0/a.zip", { file }, { ...options, ifNoneMatch: "*" });
          const got = await store.get("releases/1.0.0/a.zip");
          expect(got!.body.equals(data)).toBe(true);
          const head = await s3("head_object", { Key: `${o.prefix}/releases/1.0.0/a.zip` });
          expect([head.ContentType, head.CacheControl, head.ContentLength]).toEqual(["application/zip", CACHE_IMMUTABLE, 10 * MiB + 1]);
          // A multipart object: its ETag ends with the part count (10 MiB + 1 byte in 5 MiB parts).
          expect(String(head.ETag)).toMatch(/-3"$/);
          expect(await openUploads(o.prefix!)).toEqual([]);
        } finally {
          await store.close?.();
          await rm(dir, { recursive: true, force: true });
        }
      });

      it("the object appeared meanwhile: the put loses its condition (PreconditionFailedError), the object is untouched and the staged upload is aborted", async () => {
        const o = storeOptions();
        const store = createS3Store(o);
        const { file, dir } = await bigFile(6 * MiB);
        try {
          store.stage!("releases/1.0.0/b.zip", file, options);
          await store.put("releases/1.0.0/b.zip", "the winner", { ...options, ifNoneMatch: "*" });
          await expect(store.put("releases/1.0.0/b.zip", { file }, { ...options, ifNoneMatch: "*" })).rejects.toMatchObject({ name: "PreconditionFailedError" });
          expect((await store.get("releases/1.0.0/b.zip"))!.body.toString()).toBe("the winner");
          expect(await openUploads(o.prefix!)).toEqual([]);
        } finally {
          await store.close?.();
          await rm(dir, { recursive: true, force: true });
        }
      });

      it("a staged upload never put (the run failed before its upload step) is aborted when the store closes: no object, no open upload", async () => {
        const o = storeOptions();
        const store = createS3Store(o);
        const { file, dir } = await bigFile(6 * MiB);
        try {
          store.stage!("releases/1.0.0/c.zip", file, options);
          // Other work of the run goes on; the parts are sent meanwhile.
          await store.head("releases/1.0.0/c.zip");
        } finally {
          await store.close?.();
          await rm(dir, { recursive: true, force: true });
        }
        expect(await openUploads(o.prefix!)).toEqual([]);
        const listed = await s3<{ Contents?: unknown[] }>("list_objects_v2", { Prefix: `${o.prefix}/` });
        expect(listed.Contents ?? []).toEqual([]);
      });

      it("the answer to its CompleteMultipartUpload is lost and the SDK's retry loses the create-only condition to that very Complete: the put succeeds (the object's ETag is the one these parts make)", async () => {
        const proxy = await startFaultProxy(moto!.endpoint, { rate: 0, seed: 3 });
        const o = storeOptions({ endpoint: proxy.endpoint });
        const store = createS3Store(o);
        const { file, data, dir } = await bigFile(10 * MiB + 1);
        proxy.target({ name: "complete answer lost", match: (r) => r.method === "POST" && /[?&]uploadId=/.test(r.url), fault: "lost-response", times: 1 });
        try {
          store.stage!("releases/1.0.0/e.zip", file, options);
          await store.put("releases/1.0.0/e.zip", { file }, { ...options, ifNoneMatch: "*" });
          expect(proxy.stats.targeted["complete answer lost"]).toBe(1);
          expect((await store.get("releases/1.0.0/e.zip"))!.body.equals(data)).toBe(true);
          expect(await openUploads(o.prefix!)).toEqual([]);
        } finally {
          await store.close?.();
          await proxy.stop();
          await rm(dir, { recursive: true, force: true });
        }
      });

      it("the answer to its CreateMultipartUpload is lost and the SDK retries: the upload S3 opened for the lost answer is aborted when the store closes (the put succeeds; nothing left for gc)", async () => {
        const proxy = await startFaultProxy(moto!.endpoint, { rate: 0, seed: 4 });
        const o = storeOptions({ endpoint: proxy.endpoint });
        const store = createS3Store(o);
        const { file, data, dir } = await bigFile(10 * MiB + 1);
        // CreateMultipartUpload is POST <key>?uploads; the proxy lets moto open the upload, then drops the answer.
        proxy.target({ name: "create answer lost", match: (r) => r.method === "POST" && r.url.includes("/releases/1.0.0/f.zip?") && /[?&]uploads(=|&|$)/.test(r.url), fault: "lost-response", times: 1 });
        try {
          await store.put("releases/1.0.0/f.zip", { file }, { ...options, ifNoneMatch: "*" });
          expect(proxy.stats.targeted["create answer lost"]).toBe(1);
          expect((await store.get("releases/1.0.0/f.zip"))!.body.equals(data)).toBe(true);
        } finally {
          await store.close?.();
          await proxy.stop();
          await rm(dir, { recursive: true, force: true });
        }
        expect(await openUploads(o.prefix!)).toEqual([]);
      });

      it("a CreateMultipartUpload that fails after S3 opened the upload (every answer lost): the failed put's store aborts it on close", async () => {
        const proxy = await startFaultProxy(moto!.endpoint, { rate: 0, seed: 5 });
        const o = storeOptions({ endpoint: proxy.endpoint });
        const store = createS3Store(o);
        const { file, dir } = await bigFile(10 * MiB + 1);
        proxy.target({ name: "every create answer lost", match: (r) => r.method === "POST" && r.url.includes("/releases/1.0.0/g.zip?") && /[?&]uploads(=|&|$)/.test(r.url), fault: "lost-response", times: 100 });
        try {
          await expect(store.put("releases/1.0.0/g.zip", { file }, { ...options, ifNoneMatch: "*" })).rejects.toThrow();
          expect(proxy.stats.targeted["every create answer lost"]).toBeGreaterThan(1);
        } finally {
          await store.close?.();
          await proxy.stop();
          await rm(dir, { recursive: true, force: true });
        }
        expect(await openUploads(o.prefix!)).toEqual([]);
      });

      it("a put with other headers than the staged ones is a plain upload with its own headers (the staged one is aborted)", async () => {
        const o = storeOptions();
        const store = createS3Store(o);
        const { file, data, dir } = await bigFile(6 * MiB);
        try {
          store.stage!("releases/1.0.0/d.zip", file, options);
          await store.put("releases/1.0.0/d.zip", { file }, { contentType: "application/octet-stream", cacheControl: "no-cache", ifNoneMatch: "*" });
          const head = await s3("head_object", { Key: `${o.prefix}/releases/1.0.0/d.zip` });
          expect([head.ContentType, head.CacheControl]).toEqual(["application/octet-stream", "no-cache"]);
          expect((await store.get("releases/1.0.0/d.zip"))!.body.equals(data)).toBe(true);
          expect(await openUploads(o.prefix!)).toEqual([]);
        } finally {
          await store.close?.();
          await rm(dir, { recursive: true, force: true });
        }
      });
    });
  });
});
