import { createHash, randomBytes } from "node:crypto";
import { mkdir, mkdtemp, open, readFile, rm, symlink, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createFolderStore } from "../../src/store/folder-store.js";
import type { ObjectStore } from "../../src/store/object-store.js";
import { downloadObject, type HashTally } from "../../src/verify/download-object.js";
import { hashFileOffThread } from "../../src/core/hash-pool.js";

describe("downloadObject reads each object once", () => {
  let dir: string;
  let store: ObjectStore;
  const data = randomBytes(3 * 1024 * 1024 + 5);
  const sha256 = createHash("sha256").update(data).digest("hex");
  const prefix = randomBytes(64);

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

  it("streams a larger object through a hash worker with the challenge hash in the same pass", async () => {
    const got = await downloadObject(store, "releases/1.0.0/a.zip", { keepUpTo: 1 << 20, challengePrefix: prefix });
    expect(got).toMatchObject({ sizeBytes: data.length, sha256 });
    expect(got!.body).toBeUndefined();
    expect(got!.challenge!.toString("hex")).toBe(createHash("sha512").update(prefix).update(data).digest("hex"));
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
