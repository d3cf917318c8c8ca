import { createHash } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { PreconditionFailedError, SourceChangedError } from "../../src/core/errors.js";
import { CACHE_IMMUTABLE, CACHE_NO_CACHE } from "../../src/store/content-types.js";
import type { ObjectStore } from "../../src/store/object-store.js";
import { collect, headerCheck, streamToBuffer, writeRandomFile } from "./store-contract-helpers.js";

export interface ContractOptions {
  /** Size of the file put from disk; big enough to go multipart on S3. */
  largeFileBytes?: number;
  /** Called with measured numbers (CAS attempts) so a suite can report them. */
  report?: (line: string) => void;
  /**
   * `stored`: the store keeps the Content-Type and Cache-Control it was given
   * (S3). `derived`: it has no per-object headers; the content type follows
   * the key's extension and cache control is left to the web server (folder).
   */
  headers?: "stored" | "derived";
}

const json = { contentType: "application/json", cacheControl: CACHE_NO_CACHE };

/**
 * The behaviour every ObjectStore must show. Each test gets a fresh, empty
 * store from `makeStore` (a new folder, or a new prefix in a bucket).
 */
export function runStoreContract(name: string, makeStore: () => Promise<ObjectStore>, options: ContractOptions = {}): void {
  const largeFileBytes = options.largeFileBytes ?? 20 * 1024 * 1024;
  const expectHeaders = headerCheck(options.headers ?? "stored");
  describe(`ObjectStore contract: ${name}`, () => {
    const opened: ObjectStore[] = [];
    const fresh = async () => {
      const store = await makeStore();
      opened.push(store);
      return store;
    };
    afterEach(async () => {
      await Promise.all(opened.splice(0).map((s) => s.close?.()));
    });

    it("puts, gets and heads Buffer and string bodies; missing keys are undefined", async () => {
      const store = await fresh();
      await store.checkReachable();
      const { etag } = await store.put("a/bin", Buffer.from([0, 1, 2, 255]), { contentType: "application/octet-stream" });
      await store.put("a/text.json", '{"ü":1}', json);
      const bin = await store.get("a/bin");
      expect(bin?.body.equals(Buffer.from([0, 1, 2, 255]))).toBe(true);
      expect(bin?.meta.etag).toBe(etag);
      expect((await store.get("a/text.json"))?.body.toString("utf8")).toBe('{"ü":1}');
      const head = await store.head("a/text.json");
      expect(head?.size).toBe(Buffer.byteLength('{"ü":1}'));
      expect(head?.lastModified).toBeInstanceOf(Date);
      expect(await store.head("a/missing")).toBeUndefined();
      expect(await store.get("a/missing")).toBeUndefined();
      expect(await store.getStream("a/missing")).toBeUndefined();
    });

    it("round-trips content type and cache control", async () => {
      const store = await fresh();
      await store.put("releases/1.0.0/p.dmg", "dmg", { contentType: "application/x-apple-diskimage", cacheControl: CACHE_IMMUTABLE });
      await store.put("releases/appcast.xml", "<rss/>", { contentType: "application/xml", cacheControl: CACHE_NO_CACHE });
      expectHeaders(await store.head("releases/1.0.0/p.dmg"), { contentType: "application/x-apple-diskimage", cacheControl: CACHE_IMMUTABLE });
      expectHeaders((await store.get("releases/appcast.xml"))?.meta, { contentType: "application/xml", cacheControl: CACHE_NO_CACHE });
    });

    it("lists by prefix with store-relative keys, nested prefixes included", async () => {
      const store = await fresh();
      const keys = ["releases/1.0.0/p.dmg", "releases/1.0.0/p.zip", "releases/latest/p.dmg", "releases/appcast.xml", "records/1.0.0.json"];
      for (const key of keys) await store.put(key, key, { contentType: "text/plain" });
      expect((await collect(store.list(""))).map((m) => m.key).sort()).toEqual([...keys].sort());
      expect((await collect(store.list("releases/1.0.0/"))).map((m) => m.key).sort()).toEqual(["releases/1.0.0/p.dmg", "releases/1.0.0/p.zip"]);
      const listed = await collect(store.list("records/"));
      expect(listed).toHaveLength(1);
      expect(listed[0]?.size).toBe("records/1.0.0.json".length);
      expect(listed[0]?.etag).toBe((await store.head("records/1.0.0.json"))?.etag);
      expect(await collect(store.list("nothing/"))).toEqual([]);
    });

    it("deletes, and deleting a missing key is not an error", async () => {
      const store = await fresh();
      await store.put("x/y.json", "{}", json);
      await store.delete("x/y.json");
      expect(await store.head("x/y.json")).toBeUndefined();
      await expect(store.delete("x/y.json")).resolves.toBeUndefined();
    });

    it("copies with new content type and cache control; If-None-Match copy refuses an existing target", async () => {
      const store = await fresh();
      await store.put("releases/1.0.0/p.dmg", "payload", { contentType: "application/x-apple-diskimage", cacheControl: CACHE_IMMUTABLE });
      await store.copy("releases/1.0.0/p.dmg", "releases/latest/p.dmg", { contentType: "application/x-apple-diskimage", cacheControl: CACHE_NO_CACHE });
      const latest = await store.get("releases/latest/p.dmg");
      expect(latest?.body.toString()).toBe("payload");
      expectHeaders(latest?.meta, { contentType: "application/x-apple-diskimage", cacheControl: CACHE_NO_CACHE });
      expectHeaders(await store.head("releases/1.0.0/p.dmg"), { contentType: "application/x-apple-diskimage", cacheControl: CACHE_IMMUTABLE });
      await store.copy("releases/1.0.0/p.dmg", "releases/latest/p.dmg", { contentType: "application/x-apple-diskimage", cacheControl: CACHE_NO_CACHE });
      await expect(
        store.copy("releases/1.0.0/p.dmg", "releases/latest/p.dmg", { contentType: "application/x-apple-diskimage", ifNoneMatch: "*" }),
      ).rejects.toBeInstanceOf(PreconditionFailedError);
      await expect(store.copy("nope/missing", "x/y", { contentType: "text/plain" })).rejects.toThrow();
    });

    it("a copy pinned to the version the caller checked refuses a source replaced since (same size), writing nothing; an unchanged one is copied", async () => {
      const store = await fresh();
      const dmg = { contentType: "application/x-apple-diskimage", cacheControl: CACHE_IMMUTABLE };
      await store.put("releases/1.0.0/p.dmg", "checked bytes", dmg);
      const checked = (await store.head("releases/1.0.0/p.dmg"))!;
      await store.put("downloads/p.dmg", "damaged bytes", dmg);
      const before = (await store.get("downloads/p.dmg"))!;
      // Someone replaces the source between the caller's hash and its copy: same size, other bytes.
      await store.put("releases/1.0.0/p.dmg", "planted bytes", dmg);
      const outcome = await store.copy("releases/1.0.0/p.dmg", "downloads/p.dmg", dmg, { size: checked.size, etag: checked.etag }).catch((err: unknown) => err);
      expect(outcome).toBeInstanceOf(SourceChangedError);
      expect((outcome as Error).message).toMatch(/nothing was written/);
      const after = (await store.get("downloads/p.dmg"))!;
      expect(after.body.toString()).toBe("damaged bytes");
      expect(after.meta.etag).toBe(before.meta.etag);
      // A source removed after the check is refused the same way.
      await store.delete("releases/1.0.0/p.dmg");
      await expect(store.copy("releases/1.0.0/p.dmg", "downloads/p.dmg", dmg, { size: checked.size, etag: checked.etag })).rejects.toThrow();
      expect((await store.get("downloads/p.dmg"))?.body.toString()).toBe("damaged bytes");
      // The version pinned is still there: copied.
      await store.put("releases/1.0.0/p.dmg", "checked bytes", dmg);
      const now = (await store.head("releases/1.0.0/p.dmg"))!;
      await store.copy("releases/1.0.0/p.dmg", "downloads/p.dmg", dmg, { size: now.size, etag: now.etag });
      expect((await store.get("downloads/p.dmg"))?.body.toString()).toBe("checked bytes");
      if (store.hiddenFiles) expect(await store.hiddenFiles("")).toEqual([]);
    });

    it("If-None-Match: * creates once; the second create fails and changes nothing", async () => {
      const store = await fresh();
      await store.put("records/1.0.0.json", '{"v":1}', { ...json, ifNoneMatch: "*" });
      const err = await store.put("records/1.0.0.json", '{"v":2}', { ...json, ifNoneMatch: "*" }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(PreconditionFailedError);
      expect((err as PreconditionFailedError).condition).toBe("if-none-match");
      expect((err as PreconditionFailedError).key).toBe("records/1.0.0.json");
      expect((await store.get("records/1.0.0.json"))?.body.toString()).toBe('{"v":1}');
    });

    it("If-Match replaces only the ETag it read", async () => {
      const store = await fresh();
      const first = await store.put("catalog.json", '{"count":1}', json);
      const second = await store.put("catalog.json", '{"count":2}', { ...json, ifMatch: first.etag });
      expect(second.etag).not.toBe(first.etag);
      expect((await store.head("catalog.json"))?.etag).toBe(second.etag);
      const stale = await store.put("catalog.json", '{"count":99}', { ...json, ifMatch: first.etag }).catch((e: unknown) => e);
      expect(stale).toBeInstanceOf(PreconditionFailedError);
      expect((stale as PreconditionFailedError).condition).toBe("if-match");
      expect((await store.get("catalog.json"))?.body.toString()).toBe('{"count":2}');
      await expect(store.put("absent.json", "{}", { ...json, ifMatch: first.etag })).rejects.toBeInstanceOf(PreconditionFailedError);
      expect(await store.head("absent.json")).toBeUndefined();
    });

    it("20 concurrent compare-and-swap increments all land", async () => {
      const store = await fresh();
      await store.put("counter.json", "0", { ...json, ifNoneMatch: "*" });
      let attempts = 0;
      let conflicts = 0;
      const increment = async () => {
        for (let attempt = 0; attempt < 200; attempt++) {
          attempts++;
          const current = await store.get("counter.json");
          if (!current) throw new Error("counter vanished");
          try {
            await store.put("counter.json", String(Number(current.body.toString()) + 1), { ...json, ifMatch: current.meta.etag });
            return;
          } catch (err) {
            if (!(err instanceof PreconditionFailedError)) throw err;
            conflicts++;
            await new Promise((r) => setTimeout(r, Math.random() * (5 + attempt * 5)));
          }
        }
        throw new Error("gave up after 200 attempts");
      };
      const started = Date.now();
      await Promise.all(Array.from({ length: 20 }, increment));
      expect((await store.get("counter.json"))?.body.toString()).toBe("20");
      options.report?.(`${name}: 20 concurrent CAS increments -> counter 20, ${attempts} attempts, ${conflicts} precondition failures, ${Date.now() - started} ms`);
    });

    it("streams whole objects and inclusive byte ranges", async () => {
      const store = await fresh();
      const bytes = Buffer.from(Array.from({ length: 1000 }, (_, i) => i % 251));
      await store.put("blob.bin", bytes, { contentType: "application/octet-stream" });
      const whole = await store.getStream("blob.bin");
      expect(whole && (await streamToBuffer(whole.stream)).equals(bytes)).toBe(true);
      const part = await store.getStream("blob.bin", { start: 100, end: 199 });
      expect(part && (await streamToBuffer(part.stream)).equals(bytes.subarray(100, 200))).toBe(true);
      expect(part?.meta.etag).toBe(whole?.meta.etag);
    });

    it(`puts a ${Math.round(largeFileBytes / 1048576)} MiB file from disk, create-once`, async () => {
      const store = await fresh();
      const dir = await mkdtemp(path.join(tmpdir(), "relcast-contract-"));
      try {
        const file = path.join(dir, "big.dmg");
        const sha = await writeRandomFile(file, largeFileBytes);
        const opts = { contentType: "application/x-apple-diskimage", cacheControl: CACHE_IMMUTABLE, ifNoneMatch: "*" as const };
        const { etag } = await store.put("releases/2.0.0/big.dmg", { file }, opts);
        const head = await store.head("releases/2.0.0/big.dmg");
        expect(head?.size).toBe(largeFileBytes);
        expect(head?.etag).toBe(etag);
        expectHeaders(head, opts);
        const back = await store.getStream("releases/2.0.0/big.dmg");
        const hash = createHash("sha256");
        for await (const chunk of back!.stream) hash.update(chunk as Uint8Array);
        expect(hash.digest("hex")).toBe(sha);
        await expect(store.put("releases/2.0.0/big.dmg", { file }, opts)).rejects.toBeInstanceOf(PreconditionFailedError);
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    });

    it("names objects by URI and refuses keys that climb out of the root", async () => {
      const store = await fresh();
      const { scheme, bucket } = store.location;
      const uri = store.uriFor("releases/appcast.xml");
      expect(uri.startsWith(`${scheme}://${bucket}/`)).toBe(true);
      expect(uri.endsWith("/releases/appcast.xml")).toBe(true);
      for (const bad of ["../x", "/abs", "a//b", "a/./b"]) {
        await expect(store.put(bad, "x", { contentType: "text/plain" })).rejects.toThrow(/unsafe object key/);
      }
    });
  });
}
