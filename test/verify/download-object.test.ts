import { createHash, createPublicKey, generateKeyPairSync, randomBytes, sign, verify } from "node:crypto";
import { mkdir, mkdtemp, open, readFile, rm, stat, symlink, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createFolderStore } from "../../src/store/folder-store.js";
import type { ObjectStore } from "../../src/store/object-store.js";
import { downloadObject, signatureHolds, type HashTally } from "../../src/verify/download-object.js";
import { hashFileOffThread } from "../../src/core/hash-pool.js";
import { ReadMemo } from "../../src/verify/read-memo.js";

describe("downloadObject reads each object once", () => {
  let dir: string;
  let store: ObjectStore;
  const data = randomBytes(3 * 1024 * 1024 + 5);
  const sha256 = createHash("sha256").update(data).digest("hex");
  const keys = generateKeyPairSync("ed25519");
  const SPKI = Buffer.from("302a300506032b6570032100", "hex");
  const publicKey = keys.publicKey.export({ format: "der", type: "spki" }).subarray(SPKI.length);
  const signature = sign(null, data, keys.privateKey);
  const otherSignature = sign(null, Buffer.concat([data, Buffer.from("x")]), keys.privateKey);

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), "relcast-download-"));
    store = createFolderStore(path.join(dir, "store"));
    await store.put("releases/1.0.0/a.zip", data, { contentType: "application/zip" });
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it("keeps a small object whole, hashed, and counts it", async () => {
    const tally: HashTally = { objects: 0, bytes: 0 };
    const got = await downloadObject(store, "releases/1.0.0/a.zip", { keepUpTo: 16 << 20, tally });
    expect(got).toMatchObject({ sizeBytes: data.length, sha256 });
    expect(got!.body!.equals(data)).toBe(true);
    expect(tally).toEqual({ objects: 1, bytes: data.length });
  });

  it("streams an object too large to keep with the signature's challenge hash in the same pass", async () => {
    const streamed: ObjectStore = { ...store, openRead: undefined };
    const got = await downloadObject(streamed, "releases/1.0.0/a.zip", { keepUpTo: 1 << 20, ed25519: { publicKey, signature } });
    expect(got).toMatchObject({ sizeBytes: data.length, sha256 });
    expect(got!.body).toBeUndefined();
    expect(got!.challenge!.toString("hex")).toBe(createHash("sha512").update(signature.subarray(0, 32)).update(publicKey).update(data).digest("hex"));
    expect(await signatureHolds(got!, { publicKey, signature })).toBe(true);
    expect(await signatureHolds(got!, { publicKey, signature: otherSignature })).toBe(false);
  });

  it("checks the signature of an object read in place on the worker that read it, kept or not, without sending its bytes back unasked", async () => {
    for (const keepUpTo of [undefined, 16 << 20]) {
      for (const [sig, valid] of [[signature, true], [otherSignature, false]] as const) {
        const got = await downloadObject(store, "releases/1.0.0/a.zip", { ...(keepUpTo ? { keepUpTo } : {}), ed25519: { publicKey, signature: sig } });
        expect(got).toMatchObject({ sizeBytes: data.length, sha256, signatureValid: valid });
        expect(got!.body?.equals(data) ?? "not sent").toBe(keepUpTo ? true : "not sent");
      }
    }
  });

  it("checks a kept object's signature on the hash worker that read it, and gives the same verdict as OpenSSL over the bytes", async () => {
    for (const [sig, valid] of [[signature, true], [otherSignature, false]] as const) {
      const got = await downloadObject(store, "releases/1.0.0/a.zip", { keepUpTo: 16 << 20, ed25519: { publicKey, signature: sig } });
      // Read and checked on the worker (the object is above the size hashed on the calling thread).
      expect(got!.signatureValid).toBe(valid);
      expect(got!.body!.equals(data)).toBe(true);
      expect(verify(null, data, createPublicKey({ key: Buffer.concat([SPKI, publicKey]), format: "der", type: "spki" }), sig)).toBe(valid);
      expect(await signatureHolds(got!, { publicKey, signature: sig })).toBe(valid);
    }
    // A key of the wrong length or not on the curve fails the check, never the read.
    const bad = await downloadObject(store, "releases/1.0.0/a.zip", { keepUpTo: 16 << 20, ed25519: { publicKey: Buffer.alloc(32, 0xff), signature } });
    expect(bad).toMatchObject({ sha256, signatureValid: false });
  });

  it("reads a folder store's object in place (through a reused buffer when not kept), with the digest, size and ETag the stream path gives", async () => {
    // The same store without openRead: every object goes through getStream.
    const streamed: ObjectStore = { ...store, openRead: undefined };
    const head = await store.head("releases/1.0.0/a.zip");
    for (const options of [{}, { keepUpTo: 16 << 20 }]) {
      const inPlace = await downloadObject(store, "releases/1.0.0/a.zip", options);
      const viaStream = await downloadObject(streamed, "releases/1.0.0/a.zip", options);
      expect(inPlace).toMatchObject({ sizeBytes: data.length, sha256, etag: head!.etag });
      expect({ ...inPlace, body: undefined }).toEqual({ ...viaStream, body: undefined });
      expect(inPlace!.body?.equals(data) ?? "not kept").toBe(options.keepUpTo ? true : "not kept");
    }
  });

  it("a hash worker reads a descriptor to its end, whatever size it was opened at: bytes past it are hashed and counted, and none kept", async () => {
    const fh = await open(path.join(dir, "store", "releases", "1.0.0", "a.zip"), "r");
    try {
      expect(await hashFileOffThread(fh.fd, data.length - 10, true)).toEqual({ sizeBytes: data.length, sha256 });
      const shorter = await hashFileOffThread(fh.fd, data.length + 10, true);
      expect({ ...shorter, body: shorter.body?.equals(data) }).toEqual({ sizeBytes: data.length, sha256, body: true });
    } finally {
      await fh.close();
    }
    // A descriptor that is not open fails the job, not the worker.
    await expect(hashFileOffThread(fh.fd, 10, false)).rejects.toThrow(/fd/);
    const again = await open(path.join(dir, "store", "releases", "1.0.0", "a.zip"), "r");
    try {
      expect(await hashFileOffThread(again.fd, data.length, false)).toEqual({ sizeBytes: data.length, sha256 });
    } finally {
      await again.close();
    }
  });

  it("checks a hard-link copy of an object this run read by that read's digests (not read again); another file, or the same file changed since, is read", async () => {
    const tally: HashTally = { objects: 0, bytes: 0, memo: new ReadMemo() };
    await store.put("releases/2.0.0/b.dmg", data, { contentType: "application/octet-stream" });
    // Copied before the read, as a published store has it (a new link moves the file's change time).
    await store.copy("releases/2.0.0/b.dmg", "downloads/b.dmg", { contentType: "application/octet-stream" });
    const original = await downloadObject(store, "releases/2.0.0/b.dmg", { tally });
    const folder = path.join(dir, "store");
    // The folder store's copy is a hard link (as publish makes downloads/ and releases/latest/): one inode.
    expect((await stat(path.join(folder, "downloads/b.dmg"))).ino).toBe((await stat(path.join(folder, "releases/2.0.0/b.dmg"))).ino);
    const linked = await downloadObject(store, "downloads/b.dmg", { tally, sameAs: ["releases/2.0.0/b.dmg"] });
    expect(linked).toMatchObject({ sizeBytes: data.length, sha256 });
    expect(tally).toMatchObject({ objects: 2, bytes: 2 * data.length, sameFile: 1 });
    // Not a copy of that key: read and hashed.
    await downloadObject(store, "downloads/b.dmg", { tally, sameAs: ["releases/1.0.0/a.zip"] });
    expect(tally).toMatchObject({ objects: 3, sameFile: 1 });
    // A file of its own with the same bytes: read (only the very same file stands for another).
    await writeFile(path.join(folder, "downloads/c.dmg"), data);
    await downloadObject(store, "downloads/c.dmg", { tally, sameAs: ["releases/2.0.0/b.dmg"] });
    expect(tally).toMatchObject({ objects: 4, sameFile: 1 });
    // The same inode written in place after the read (its change time moves): read again, and its new digest given.
    const changed = Buffer.from(data);
    changed[10] = changed[10]! ^ 1;
    await writeFile(path.join(folder, "downloads/b.dmg"), changed);
    const again = await downloadObject(store, "downloads/b.dmg", { tally, sameAs: ["releases/2.0.0/b.dmg"] });
    expect(again!.sha256).toBe(createHash("sha256").update(changed).digest("hex"));
    expect(again!.sha256).not.toBe(original!.sha256);
    expect(tally).toMatchObject({ objects: 5, sameFile: 1 });
  });

  it("never reads through a link: a linked object or folder is missing", async () => {
    const outside = path.join(dir, "outside.bin");
    await writeFile(outside, "secret");
    await mkdir(path.join(dir, "store", "downloads"), { recursive: true });
    await symlink(outside, path.join(dir, "store", "downloads", "x.dmg"));
    await symlink(dir, path.join(dir, "store", "releases", "9.9.9"));
    expect(await store.openRead!("downloads/x.dmg")).toBeUndefined();
    expect(await downloadObject(store, "downloads/x.dmg")).toBeUndefined();
    expect(await downloadObject(store, "releases/9.9.9/outside.bin", { keepUpTo: 16 << 20 })).toBeUndefined();
  });

  it("writes the object through to a file when asked, and answers undefined for a missing one", async () => {
    const file = path.join(dir, "copy.bin");
    const got = await downloadObject(store, "releases/1.0.0/a.zip", { toFile: file });
    expect(got?.sha256).toBe(sha256);
    expect((await readFile(file)).equals(data)).toBe(true);
    expect(await downloadObject(store, "releases/1.0.0/missing.zip")).toBeUndefined();
  });
});
