import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { createReadStream } from "node:fs";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { applyDelta } from "../../../src/sparkle/delta/delta-apply.js";
import { applyDeltaToTree } from "../../../src/sparkle/delta/delta-apply-tree.js";
import { limitsForNewTree } from "../../../src/sparkle/delta/delta-limits.js";
import { createDeltaFromTrees } from "../../../src/sparkle/delta/delta-create.js";
import { readStoredZipTree } from "../../../src/sparkle/delta/stored-zip-tree.js";
import { hashTree } from "../../../src/sparkle/delta/tree-hash.js";
import { openZipBundleTree, type ZipBundleTree } from "../../../src/sparkle/delta/zip-bundle-tree.js";
import { extractBundleZip } from "../../../src/sparkle/delta/zip-tree.js";
import { zipBundle } from "../../../src/steps/zip/reproducible-zip.js";
import { serializeTreeManifest, treeManifestOf } from "../../../src/sparkle/delta/tree-manifest.js";
import { describeTree, makeDeltaTrees } from "../../helpers/delta-trees.js";

const here = path.dirname(fileURLToPath(import.meta.url));
const python = (script: string, ...args: string[]): string => execFileSync("python3", [path.join(here, script), ...args], { encoding: "utf8" }).trim();

let dir: string;
let oldZip: string;
let newZip: string;
let oldUnpacked: string;
let newUnpacked: string;
let newTree: ZipBundleTree;
/** SHA-1s of the new zip's files and links as the zip step took them while zipping. */
let zippedHashes: Map<string, Buffer>;
let scratch = 0;

const sha256 = async (file: string): Promise<{ sha256: string; sizeBytes: number }> => {
  const bytes = await readFile(file);
  return { sha256: createHash("sha256").update(bytes).digest("hex"), sizeBytes: bytes.length };
};

async function readOld(zip: string, expected?: { sha256: string; sizeBytes: number }) {
  const work = path.join(dir, `work-${scratch++}`);
  await mkdir(work);
  return readStoredZipTree(createReadStream(zip, { highWaterMark: 4096 }), { name: zip, newZip: newTree, spillFile: path.join(work, "spill"), keepLimit: 250_000, expected: expected ?? (await sha256(zip)) });
}

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "relcast-delta-zips-"));
  const { oldRoot, newRoot } = await makeDeltaTrees(dir);
  oldZip = path.join(dir, "old.zip");
  newZip = path.join(dir, "new.zip");
  await zipBundle(oldRoot, oldZip);
  zippedHashes = new Map((await zipBundle(newRoot, newZip)).contentHashes);
  oldUnpacked = await extractBundleZip(oldZip, path.join(dir, "old-unpacked"));
  newUnpacked = await extractBundleZip(newZip, path.join(dir, "new-unpacked"));
  newTree = await openZipBundleTree(newZip);
});
afterAll(async () => {
  await newTree?.close();
  await rm(dir, { recursive: true, force: true });
});

describe("a bundle zip read in place (no unpacking)", () => {
  it("has the tree hash of the folder it unpacks to, by an independent Python implementation of Sparkle's hash", async () => {
    expect(newTree.hash.toString("hex")).toBe(python("sparkle-tree-hash.py", newUnpacked));
    expect(newTree.entries.map((e) => e.rel)).toEqual((await hashTree(newUnpacked)).entries.map((e) => e.rel));
  });

  it("reads an older zip from a stream: same hash as unpacked, unchanged entries taken from the new zip without inflating", async () => {
    const old = await readOld(oldZip);
    try {
      expect(old.hash.toString("hex")).toBe(python("sparkle-tree-hash.py", oldUnpacked));
      expect(old.reused).toBeGreaterThan(0);
      expect(old.inflated).toBeGreaterThan(0);
      expect(old.sha256).toBe((await sha256(oldZip)).sha256);
    } finally {
      await old.close();
    }
  });

  it("takes every entry from the new zip when the old zip is the same zip", async () => {
    const same = await readOld(newZip);
    try {
      expect(same.hash.equals(newTree.hash)).toBe(true);
      expect(same.inflated).toBe(0);
    } finally {
      await same.close();
    }
  });

  it("compares compressed bytes, not CRCs: an entry with the new zip's CRC and sizes but other bytes is inflated and hashed", async () => {
    // A stored entry (a symlink target) with one byte changed and its CRC left as it was.
    const [rel, raw] = [...newTree.raw].find(([, r]) => r.method === 0 && r.size > 0)!;
    const forged = Buffer.from(await readFile(newZip));
    const at = raw.localHeaderOffset + 30 + forged.readUInt16LE(raw.localHeaderOffset + 26) + forged.readUInt16LE(raw.localHeaderOffset + 28);
    forged[at] = forged[at]! ^ 0x01;
    const forgedZip = path.join(dir, "forged.zip");
    await writeFile(forgedZip, forged);
    const tree = await readOld(forgedZip);
    try {
      expect(tree.inflated).toBe(1);
      expect(tree.hash.equals(newTree.hash)).toBe(false);
      expect(tree.hash.toString("hex")).toBe(python("sparkle-tree-hash.py", await extractBundleZip(forgedZip, path.join(dir, "forged"))));
      expect(tree.linkHashes.get(rel) ?? tree.fileHashes.get(rel)).not.toEqual(newTree.contentHash(rel));
    } finally {
      await tree.close();
    }
  });

  it("refuses a zip that does not match its record's SHA-256, in the same pass", async () => {
    const expected = await sha256(oldZip);
    await expect(readOld(oldZip, { ...expected, sha256: "0".repeat(64) })).rejects.toThrow(/does not match its record/);
    await expect(readOld(oldZip, { ...expected, sizeBytes: expected.sizeBytes + 1 })).rejects.toThrow(/does not match its record/);
  });
});

describe("a delta made from zips read in place", () => {
  it("applied in memory by the tree applier gives the new tree's hash, and applied on disk to the unpacked old zip gives the unpacked new zip byte for byte", async () => {
    const old = await readOld(oldZip);
    const delta = path.join(dir, "zips.delta");
    try {
      const made = await createDeltaFromTrees(old, newTree, delta, { compression: "lzma", diffLimitBytes: 250_000, tmpDir: dir });
      expect(made.counts.diffed).toBeGreaterThan(0);
      expect(made.counts.cloned).toBeGreaterThan(0);
      const inMemory = await applyDeltaToTree(old, delta, { limits: limitsForNewTree(newTree) });
      expect(inMemory.afterHash).toBe(newTree.hash.toString("hex"));
      const out = path.join(dir, "applied", "Demo.bundle");
      await applyDelta(oldUnpacked, out, delta);
      expect(await describeTree(out)).toEqual(await describeTree(newUnpacked));
    } finally {
      await old.close();
    }
  });

  it("the tree applier refuses a delta for another old tree", async () => {
    const old = await readOld(oldZip);
    const same = await readOld(newZip);
    const delta = path.join(dir, "other.delta");
    try {
      await createDeltaFromTrees(old, newTree, delta, { compression: "none", diffLimitBytes: 250_000, tmpDir: dir });
      await expect(applyDeltaToTree(same, delta)).rejects.toThrow(/not the one this delta was made from/);
    } finally {
      await old.close();
      await same.close();
    }
  });
});

describe("the new tree from the zip step's content hashes (no inflating of the new zip)", () => {
  it("is the tree read from the zip: same entries, hashes and tree hash, and the same delta and manifest bytes", async () => {
    const given = await openZipBundleTree(newZip, { contentHashes: zippedHashes });
    try {
      expect(given.hash.equals(newTree.hash)).toBe(true);
      expect(given.entries).toEqual(newTree.entries);
      expect(new Map(given.fileHashes)).toEqual(new Map(newTree.fileHashes));
      expect(new Map(given.linkHashes)).toEqual(new Map(newTree.linkHashes));
      const zip = await sha256(newZip);
      expect(serializeTreeManifest((await treeManifestOf(given, "2.0", zip))!).equals(serializeTreeManifest((await treeManifestOf(newTree, "2.0", zip))!))).toBe(true);
      const bytes: Buffer[] = [];
      for (const tree of [given, newTree]) {
        const old = await readOld(oldZip);
        try {
          const delta = path.join(dir, `same-delta-${bytes.length}.delta`);
          await createDeltaFromTrees(old, tree, delta, { compression: "zlib", diffLimitBytes: 250_000, tmpDir: dir });
          bytes.push(await readFile(delta));
        } finally {
          await old.close();
        }
      }
      expect(bytes[0]!.equals(bytes[1]!)).toBe(true);
    } finally {
      await given.close();
    }
  });

  it("refuses hashes that do not cover exactly the zip's files and links (a pipeline bug, never a wrong tree)", async () => {
    const name = [...zippedHashes.keys()][0]!;
    const missing = new Map(zippedHashes);
    missing.delete(name);
    await expect(openZipBundleTree(newZip, { contentHashes: missing })).rejects.toMatchObject({ code: "E_INTERNAL", message: expect.stringContaining("no content hash") });
    const extra = new Map(zippedHashes).set("Other.bundle/x", Buffer.alloc(20));
    await expect(openZipBundleTree(newZip, { contentHashes: extra })).rejects.toMatchObject({ code: "E_INTERNAL" });
  });

  it("checks every entry it reads against the zip's CRC-32: bytes changed on disk after zipping are refused, not diffed", async () => {
    const damaged = path.join(dir, "damaged.zip");
    const bytes = await readFile(newZip);
    const tree = await openZipBundleTree(newZip, { contentHashes: zippedHashes });
    let target: { rel: string; at: number } | undefined;
    try {
      for (const [rel, r] of tree.raw) {
        if (r.method !== 0 || r.size === 0 || !tree.fileHashes.has(rel)) continue;
        target = { rel, at: r.localHeaderOffset + 30 + bytes.readUInt16LE(r.localHeaderOffset + 26) + bytes.readUInt16LE(r.localHeaderOffset + 28) };
        break;
      }
    } finally {
      await tree.close();
    }
    expect(target).toBeDefined();
    bytes[target!.at] = bytes[target!.at]! ^ 0xff;
    await writeFile(damaged, bytes);
    const opened = await openZipBundleTree(damaged, { contentHashes: zippedHashes });
    try {
      const entry = opened.entries.find((e) => e.rel === target!.rel)!;
      await expect(opened.source.readFile(entry)).rejects.toMatchObject({ code: "E_INPUT", message: expect.stringMatching(/other bytes than its size and CRC-32 say/) });
    } finally {
      await opened.close();
    }
  });
});
