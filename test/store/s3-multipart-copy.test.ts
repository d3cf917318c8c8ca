import { createHash, randomBytes } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PreconditionFailedError, RelcastError, SourceChangedError } from "../../src/core/errors.js";
import { CACHE_IMMUTABLE } from "../../src/store/content-types.js";
import { createS3Store } from "../../src/store/s3-store.js";
import type { S3StoreOptions } from "../../src/store/s3-options.js";
import { startFaultProxy, type FaultProxy, type RequestInfo } from "../helpers/fault-proxy.js";
import { startS3Probe, type S3Probe } from "../helpers/boto3-probe.js";
import { motoUnavailableReason, startMotoServer, type MotoServer } from "../helpers/moto-server.js";
import { bucketReader, type BucketReader } from "../helpers/moto-http.js";

/**
 * Server-side copies of big objects go in parts (UploadPartCopy), as S3 refuses a single copy of more than
 * 5 GiB: the threshold and the part size are lowered here (store knobs) so a 12 MiB object takes the path a
 * 6 GiB zip takes. Checked with independent clients: boto3 (one Python for the file, not an aws cli start
 * per check) for headers, size, the multipart ETag and uploads left open; plain HTTP for the bytes. Big
 * objects are 10 MiB and a few bytes: three 5 MiB parts, the last one short.
 */
const BUCKET = "relcast-copies";
const MiB = 1024 * 1024;
const reason = motoUnavailableReason();
const BIG = 10 * MiB + 1;
let moto: MotoServer | undefined;
let probe: S3Probe | undefined;
let reader: BucketReader | undefined;

const headObject = (key: string) => probe!.call("head_object", { Bucket: BUCKET, Key: key });
const listedUnder = async (prefix: string) => (await probe!.call<{ Contents?: unknown[] }>("list_objects_v2", { Bucket: BUCKET, Prefix: prefix })).Contents;

const prefixes: string[] = [];
function storeOptions(extra: Partial<S3StoreOptions> = {}): S3StoreOptions {
  const prefix = `c-${randomBytes(4).toString("hex")}`;
  prefixes.push(prefix);
  return {
    bucket: BUCKET, prefix, region: "us-east-1", endpoint: moto!.endpoint, forcePathStyle: true, partSizeBytes: 5 * MiB, queueSize: 2,
    multipartCopyAboveBytes: 5 * MiB, copyPartBytes: 5 * MiB, ...extra,
  };
}

async function openUploads(prefix: string): Promise<unknown[]> {
  return (await probe!.call<{ Uploads?: unknown[] }>("list_multipart_uploads", { Bucket: BUCKET, Prefix: `${prefix}/` })).Uploads ?? [];
}

const sha256 = (b: Buffer) => createHash("sha256").update(b).digest("hex");

if (reason) console.warn(`S3 multipart copy tests skipped: ${reason}`);
describe.skipIf(Boolean(reason))("S3 store: server-side copies of big objects in parts", () => {
  beforeAll(async () => {
    moto = await startMotoServer();
    probe = startS3Probe(moto.endpoint);
    reader = bucketReader(moto.endpoint, BUCKET);
    await probe.call("create_bucket", { Bucket: BUCKET });
  });
  afterAll(async () => {
    await probe?.close();
    await moto?.stop();
  });

  it("copies a source over the threshold in parts: an independent client sees the same bytes, the new headers and a 3-part ETag; nothing left open", async () => {
    const o = storeOptions();
    const store = createS3Store(o);
    const data = randomBytes(10 * MiB + 17);
    await store.put("releases/1.0.0/big.zip", data, { contentType: "application/zip" });
    const { etag } = await store.copy("releases/1.0.0/big.zip", "downloads/big.zip", { contentType: "application/x-apple-diskimage", cacheControl: CACHE_IMMUTABLE, ifNoneMatch: "*" });
    expect(etag).toMatch(/-3"?$/);
    const head = await headObject(`${o.prefix}/downloads/big.zip`);
    expect(head).toMatchObject({ ContentLength: data.length, ContentType: "application/x-apple-diskimage", CacheControl: CACHE_IMMUTABLE, ETag: etag });
    expect(await reader!.sha256(`${o.prefix}/downloads/big.zip`)).toBe(sha256(data));
    expect(await openUploads(o.prefix!)).toEqual([]);
    await store.close?.();
  });

  it("a source at or under the threshold is one CopyObject (a plain ETag, not a multipart one)", async () => {
    const o = storeOptions();
    const store = createS3Store(o);
    const data = randomBytes(5 * MiB);
    const put = await store.put("releases/1.0.0/small.zip", data, { contentType: "application/zip" });
    const { etag } = await store.copy("releases/1.0.0/small.zip", "releases/latest/small.zip", { contentType: "application/zip" });
    expect(etag).toBe(put.etag);
    expect(etag).not.toMatch(/-\d+"?$/);
    await store.close?.();
  });

  it("a create-only copy onto an existing object is refused as a precondition, leaves the object as it was and no upload open", async () => {
    const o = storeOptions();
    const store = createS3Store(o);
    const data = randomBytes(BIG);
    await store.put("releases/1.0.0/big.zip", data, { contentType: "application/zip" });
    await store.put("downloads/big.zip", "already here", { contentType: "application/zip" });
    await expect(store.copy("releases/1.0.0/big.zip", "downloads/big.zip", { contentType: "application/zip", ifNoneMatch: "*" })).rejects.toBeInstanceOf(PreconditionFailedError);
    expect((await store.get("downloads/big.zip"))!.body.toString()).toBe("already here");
    expect(await openUploads(o.prefix!)).toEqual([]);
    await store.close?.();
  });

  it("a part copy that keeps failing fails the copy, writes no object and aborts the upload", async () => {
    const proxy = await startFaultProxy(moto!.endpoint, { rate: 0, seed: 11 });
    const o = storeOptions({ endpoint: proxy.endpoint });
    const store = createS3Store(o);
    try {
      await store.put("releases/1.0.0/big.zip", randomBytes(BIG), { contentType: "application/zip" });
      proxy.target({ name: "part 2 copy", match: (r) => r.method === "PUT" && /[?&]partNumber=2\b/.test(r.url) && r.headers["x-amz-copy-source"] !== undefined, fault: "500", times: 50 });
      await expect(store.copy("releases/1.0.0/big.zip", "downloads/big.zip", { contentType: "application/zip", ifNoneMatch: "*" })).rejects.toThrow();
      expect(proxy.stats.targeted["part 2 copy"]).toBeGreaterThan(0);
      expect(await store.head("downloads/big.zip")).toBeUndefined();
      expect(await openUploads(o.prefix!)).toEqual([]);
    } finally {
      await store.close?.();
      await proxy.stop();
    }
  });
  it("a copy whose Complete gets NoSuchUpload while another writer copied the same bytes with other headers: not claimed, E_STORE says another writer wrote it", async () => {
    const proxy = await startFaultProxy(moto!.endpoint, { rate: 0, seed: 13 });
    const o = storeOptions({ endpoint: proxy.endpoint });
    const store = createS3Store(o);
    const other = createS3Store({ ...o, endpoint: moto!.endpoint, conditionalWrites: "unverified-single-writer", onWarning: () => undefined });
    try {
      await store.put("releases/1.0.0/big.zip", randomBytes(BIG), { contentType: "application/zip" });
      const isComplete = (r: RequestInfo) => r.method === "POST" && r.url.includes("/downloads/big.zip?uploadId=");
      const held = proxy.hold(isComplete);
      proxy.target({ name: "gone", match: isComplete, fault: "404-no-such-upload", times: 1 });
      const copying = store.copy("releases/1.0.0/big.zip", "downloads/big.zip", { contentType: "application/zip", cacheControl: "no-cache" }).then(() => "copied", (e: unknown) => e);
      await held.arrived;
      // Same source, same 5 MiB parts: the same multipart ETag and size as this copy's parts make.
      await other.copy("releases/1.0.0/big.zip", "downloads/big.zip", { contentType: "text/html", cacheControl: "no-store" });
      held.release();
      const outcome = await copying;
      expect(proxy.stats.targeted["gone"]).toBe(1);
      expect(outcome).toBeInstanceOf(RelcastError);
      expect((outcome as RelcastError).message).toMatch(/downloads\/big\.zip was written meanwhile by another writer: .*NoSuchUpload.*the same bytes but other headers/);
      const head = await headObject(`${o.prefix}/downloads/big.zip`);
      expect(head.ContentType).toBe("text/html");
      expect(await openUploads(o.prefix!)).toEqual([]);
    } finally {
      await store.close?.();
      await other.close?.();
      await proxy.stop();
    }
  });

  describe("a source replaced while it is copied", () => {
    // The test server refuses a copy whose x-amz-copy-source-if-match is not the source's ETag, as S3 does (moto alone
    // ignores it); `dropPin` puts a proxy in front that drops the header, as a server that ignores it would.
    async function replacedMidway(o: { dropPin: boolean; size: number; holdAt: (r: RequestInfo) => boolean }) {
      const proxy: FaultProxy = await startFaultProxy(moto!.endpoint, { rate: 0, seed: 7, ...(o.dropPin && { dropHeaders: ["x-amz-copy-source-if-match"] }) });
      const opts = storeOptions({ endpoint: proxy.endpoint, queueSize: 1 });
      const store = createS3Store(opts);
      try {
        const { etag } = await store.put("releases/1.0.0/big.zip", randomBytes(o.size), { contentType: "application/zip" });
        const held = proxy.hold(o.holdAt);
        const copying = store.copy("releases/1.0.0/big.zip", "downloads/big.zip", { contentType: "application/zip" }).then(() => "copied", (e: unknown) => e);
        await held.arrived;
        // Another writer replaces the source (straight to the server, not through the proxy).
        const other = createS3Store({ ...opts, endpoint: moto!.endpoint, conditionalWrites: "unverified-single-writer", onWarning: () => undefined });
        await other.put("releases/1.0.0/big.zip", randomBytes(o.size), { contentType: "application/zip" });
        await other.close?.();
        held.release();
        const outcome = await copying;
        return { outcome, prefix: opts.prefix!, store, proxy, etag };
      } catch (err) {
        await store.close?.();
        await proxy.stop();
        throw err;
      }
    }
    const isCopyOf = (r: RequestInfo) => r.method === "PUT" && r.headers["x-amz-copy-source"] !== undefined;

    it("in parts, between the HEAD and the parts (each part names the ETag: the server refuses them): the copy stops with SourceChangedError, no object, no upload open", async () => {
      const holdAt = (r: RequestInfo) => r.method === "POST" && /downloads\/big\.zip\?uploads/.test(r.url);
      const { outcome, prefix, store, proxy, etag } = await replacedMidway({ dropPin: false, size: BIG, holdAt });
      try {
        // (The proof's own part copy, of its probe key, is not the copy's.)
        const partCopies = proxy.seen.filter((r) => isCopyOf(r) && r.url.includes("/downloads/"));
        // Every part copy names the ETag the copy began with; the first one refused ends it (a 412 is not retried).
        expect(partCopies.map((r) => r.headers["x-amz-copy-source-if-match"])).toEqual([etag]);
        // The parts were never joined.
        expect(proxy.seen.filter((r) => r.method === "POST" && r.url.includes("downloads/big.zip?uploadId="))).toEqual([]);
        expect(outcome).toBeInstanceOf(SourceChangedError);
        expect((outcome as SourceChangedError).message).toMatch(/was replaced while it was copied .*nothing was written/);
        expect((outcome as SourceChangedError).exitCode).toBe(9);
        expect(await listedUnder(`${prefix}/downloads/`)).toBeUndefined();
        expect(await openUploads(prefix)).toEqual([]);
      } finally {
        await store.close?.();
        await proxy.stop();
      }
    });

    it("on a server that ignores the ETag on part copies (the proof finds it), a source replaced and put back (A, B, A) while it is copied: the copy is one whole version, never parts of two", async () => {
      const proxy = await startFaultProxy(moto!.endpoint, { rate: 0, seed: 7, dropHeaders: ["x-amz-copy-source-if-match"] });
      const opts = storeOptions({ endpoint: proxy.endpoint, queueSize: 1 });
      const store = createS3Store(opts);
      const other = createS3Store({ ...opts, endpoint: moto!.endpoint, conditionalWrites: "unverified-single-writer", onWarning: () => undefined });
      try {
        const v1 = randomBytes(BIG);
        const v2 = randomBytes(BIG);
        await store.put("releases/1.0.0/big.zip", v1, { contentType: "application/zip" });
        // The first copy request past the source's first bytes: a part 2 when copied in parts, else the one CopyObject.
        const range = (r: RequestInfo) => String(r.headers["x-amz-copy-source-range"] ?? "");
        const held = proxy.hold((r) => isCopyOf(r) && !range(r).startsWith("bytes=0-"));
        const copying = store.copy("releases/1.0.0/big.zip", "downloads/big.zip", { contentType: "application/zip" }).then(() => "copied", (e: unknown) => e);
        const at = await held.arrived;
        await other.put("releases/1.0.0/big.zip", v2, { contentType: "application/zip" });
        if (range(at) !== "") {
          // In parts: the rest is copied from v2, and v1 (the same bytes, so the same ETag) is back before the check.
          const check = proxy.hold((r) => r.method === "HEAD" && r.url.includes("releases/1.0.0/big.zip"));
          held.release();
          await check.arrived;
          await other.put("releases/1.0.0/big.zip", v1, { contentType: "application/zip" });
          check.release();
        } else {
          await other.put("releases/1.0.0/big.zip", v1, { contentType: "application/zip" });
          held.release();
        }
        const outcome = await copying;
        // The proof found the pin ignored, so nothing was copied in parts.
        expect(proxy.seen.filter((r) => isCopyOf(r) && r.url.includes("/downloads/") && range(r) !== "")).toEqual([]);
        expect(outcome).toBe("copied");
        expect([sha256(v1), sha256(v2)]).toContain(await reader!.sha256(`${opts.prefix}/downloads/big.zip`));
        expect(await openUploads(opts.prefix!)).toEqual([]);
      } finally {
        await store.close?.();
        await other.close?.();
        await proxy.stop();
      }
    });

    it("on a server that ignores the ETag on part copies, a source too big for one CopyObject is refused (E_STORE), nothing written, no upload open", async () => {
      const proxy = await startFaultProxy(moto!.endpoint, { rate: 0, seed: 9, dropHeaders: ["x-amz-copy-source-if-match"] });
      const opts = storeOptions({ endpoint: proxy.endpoint, maxSingleCopyBytes: 8 * MiB });
      const store = createS3Store(opts);
      try {
        await store.put("releases/1.0.0/big.zip", randomBytes(BIG), { contentType: "application/zip" });
        const from = proxy.seen.length;
        const err = await store.copy("releases/1.0.0/big.zip", "downloads/big.zip", { contentType: "application/zip" }).then(() => undefined, (e: unknown) => e);
        expect(err).toBeInstanceOf(RelcastError);
        expect((err as RelcastError).code).toBe("E_STORE");
        expect((err as RelcastError).message).toMatch(/must be copied in parts, and this store accepts a part copy whose x-amz-copy-source-if-match names a wrong ETag.*nothing was written/);
        expect((err as RelcastError).hint).toMatch(/enforces x-amz-copy-source-if-match/);
        expect(proxy.seen.slice(from).filter((r) => r.method !== "HEAD" && r.method !== "GET")).toEqual([]);
        expect(await store.head("downloads/big.zip")).toBeUndefined();
        expect(await openUploads(opts.prefix!)).toEqual([]);
      } finally {
        await store.close?.();
        await proxy.stop();
      }
    });

    it("as one CopyObject: the server refuses it (the request names the ETag), SourceChangedError, no object", async () => {
      const { outcome, prefix, store, proxy } = await replacedMidway({ dropPin: false, size: 2 * MiB, holdAt: isCopyOf });
      try {
        expect(outcome).toBeInstanceOf(SourceChangedError);
        expect(await listedUnder(`${prefix}/downloads/`)).toBeUndefined();
      } finally {
        await store.close?.();
        await proxy.stop();
      }
    });
  });

  it("a caller that knows the source's size and ETag spares the HEAD; an ETag that is not the source's fails the copy, nothing written", async () => {
    const proxy = await startFaultProxy(moto!.endpoint, { rate: 0, seed: 5 });
    const o = storeOptions({ endpoint: proxy.endpoint });
    const store = createS3Store(o);
    try {
      const data = randomBytes(BIG);
      const { etag } = await store.put("releases/1.0.0/big.zip", data, { contentType: "application/zip" });
      const from = proxy.seen.length;
      const headsOfSources = () => proxy.seen.slice(from).filter((r) => r.method === "HEAD" && r.url.includes("releases/1.0.0/"));
      // Small (one CopyObject): no HEAD of the source at all.
      const small = randomBytes(MiB);
      const put = await store.put("releases/1.0.0/small.zip", small, { contentType: "application/zip" });
      await store.copy("releases/1.0.0/small.zip", "downloads/small.zip", { contentType: "application/zip" }, { size: small.length, etag: put.etag });
      expect(headsOfSources()).toEqual([]);
      expect((await store.head("downloads/small.zip"))?.size).toBe(small.length);
      // In parts: the one HEAD is the check before the parts are joined.
      await store.copy("releases/1.0.0/big.zip", "downloads/big.zip", { contentType: "application/zip" }, { size: data.length, etag });
      expect(headsOfSources()).toHaveLength(1);
      expect(await reader!.sha256(`${o.prefix}/downloads/big.zip`)).toBe(sha256(data));
      await expect(store.copy("releases/1.0.0/big.zip", "downloads/other.zip", { contentType: "application/zip" }, { size: data.length, etag: `"${"0".repeat(32)}"` })).rejects.toBeInstanceOf(SourceChangedError);
      expect(await store.head("downloads/other.zip")).toBeUndefined();
      expect(await openUploads(o.prefix!)).toEqual([]);
    } finally {
      await store.close?.();
      await proxy.stop();
    }
  });

  it("a stop while the Complete of a copy is on its way says the object is in the store (it is), not that the upload was aborted", async () => {
    // A proxy that lets moto apply the Complete, then holds its answer until the test has stopped the store.
    let applied!: () => void;
    const completeApplied = new Promise<void>((resolve) => (applied = resolve));
    const held: Array<() => void> = [];
    const proxy = http.createServer((req, res) => {
      const body: Buffer[] = [];
      req.on("data", (c: Buffer) => body.push(c));
      req.on("end", () => {
        const up = http.request({ host: "127.0.0.1", port: moto!.port, method: req.method, path: req.url, headers: req.headers }, (answer) => {
          const got: Buffer[] = [];
          answer.on("data", (c: Buffer) => got.push(c));
          answer.on("end", () => {
            const send = () => {
              res.writeHead(answer.statusCode!, answer.headers);
              res.end(Buffer.concat(got));
            };
            if (req.method === "POST" && /[?&]uploadId=/.test(req.url ?? "")) {
              held.push(send);
              applied();
            } else send();
          });
        });
        up.end(Buffer.concat(body));
      });
    });
    await new Promise<void>((resolve) => proxy.listen(0, "127.0.0.1", resolve));
    const o = storeOptions({ endpoint: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`, conditionalWrites: "unverified-single-writer", onWarning: () => undefined });
    const store = createS3Store(o);
    try {
      await store.put("releases/2.0.0/big.zip", randomBytes(10 * MiB + 1), { contentType: "application/zip" });
      const copying = store.copy("releases/2.0.0/big.zip", "downloads/big.zip", { contentType: "application/zip" }).catch((e: unknown) => e);
      await completeApplied;
      const stopping = store.abortInFlight!();
      for (const send of held.splice(0)) send();
      const lines = await stopping;
      expect(lines).toContain(`${o.prefix}/downloads/big.zip was being completed when the run stopped: that object is in the store`);
      expect(lines.join("\n")).not.toMatch(/aborted the multipart upload of .*downloads\/big\.zip/);
      expect((await headObject(`${o.prefix}/downloads/big.zip`)).ContentLength).toBe(10 * MiB + 1);
      void copying;
    } finally {
      await store.close?.();
      await new Promise<void>((resolve) => proxy.close(() => resolve()));
    }
  });
});
