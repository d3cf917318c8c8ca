import { createHash, randomBytes } from "node:crypto";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createFolderStore } from "../../src/store/folder-store.js";
import type { ObjectStore } from "../../src/store/object-store.js";
import { downloadObject, type HashTally } from "../../src/verify/download-object.js";

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

  it("writes the object through to a file when asked, and answers undefined for a missing one", async () => {
    const file = path.join(dir, "copy.bin");
    const got = await downloadObject(store, "releases/1.0.0/a.zip", { toFile: file });
    expect(got?.sha256).toBe(sha256);
    expect((await readFile(file)).equals(data)).toBe(true);
    expect(await downloadObject(store, "releases/1.0.0/missing.zip")).toBeUndefined();
  });
});
