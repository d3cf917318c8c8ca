import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { createReadStream } from "node:fs";
import { mkdir, mkdtemp, open, readFile, rm, stat, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { applyDeltaToTree } from "../../../src/sparkle/delta/delta-apply-tree.js";
import { createDeltaFromTrees } from "../../../src/sparkle/delta/delta-create.js";
import { readManifestTable } from "../../../src/sparkle/delta/manifest-table.js";
import { treeFromManifest, type RangeReader } from "../../../src/sparkle/delta/manifest-tree.js";
import { readStoredZipTree } from "../../../src/sparkle/delta/stored-zip-tree.js";
import { parseTreeManifest, serializeTreeManifest, treeManifestOf, type TreeManifest } from "../../../src/sparkle/delta/tree-manifest.js";
import { treeHashOf } from "../../../src/sparkle/delta/tree-hash.js";
import { writeTreeManifest } from "../../../src/sparkle/delta/tree-manifest-writer.js";
import { openZipBundleTree, type ZipBundleTree } from "../../../src/sparkle/delta/zip-bundle-tree.js";
import { extractBundleZip } from "../../../src/sparkle/delta/zip-tree.js";
import { zipBundle } from "../../../src/steps/zip/reproducible-zip.js";
import { makeDeltaTrees } from "../../helpers/delta-trees.js";

const here = path.dirname(fileURLToPath(import.meta.url));

let dir: string;
let oldZip: string;
let newZip: string;
let oldDigest: { sha256: string; sizeBytes: number };
let newTree: ZipBundleTree;
let manifestBytes: Buffer;
let work = 0;
const ranges: Array<[number, number]> = [];

/** Ranged reads of the old zip, recorded: what a store would be asked for. */
async function rangeReader(file: string): Promise<{ read: RangeReader; close(): Promise<void> }> {
  const fh = await open(file, "r");
  return {
    async read(start, end) {
      ranges.push([start, end]);
      const out = Buffer.alloc(end - start + 1);
      const { bytesRead } = await fh.read(out, 0, out.length, start);
      return out.subarray(0, bytesRead);
    },
    close: () => fh.close(),
  };
}

async function manifestTree(bytes: Buffer, zip = oldZip) {
  const { table, tree } = readManifestTable(bytes, "tree.json");
  const reader = await rangeReader(zip);
  const scratch = path.join(dir, `scratch-${work++}`);
  await mkdir(scratch);
  const opened = await treeFromManifest(table, tree, { name: zip, readRange: reader.read, scratchFile: path.join(scratch, "kept") });
  return { ...opened, fetchedCount: () => opened.fetched, close: async () => (await opened.close(), await reader.close()) };
}

/** A manifest edited and made consistent again (its tree hash recomputed), as a careful forger would. */
function forged(edit: (m: TreeManifest) => void): Buffer {
  const m = structuredClone(parseTreeManifest(manifestBytes, "tree.json").manifest);
  edit(m);
  const { tree } = (() => {
    const hashes = new Map(m.entries.flatMap((e) => (e.kind === "dir" ? [] : [[e.path, Buffer.from(e.sha1, "hex")] as const])));
    const entries = m.entries.map((e) => ({ rel: e.path, kind: e.kind, perms: e.mode }));
    return { tree: treeHashOf(entries, (e) => hashes.get(e.rel)!) };
  })();
  m.treeHash = tree.toString("hex");
  return serializeTreeManifest(m);
}

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "relcast-tree-manifest-"));
  const { oldRoot, newRoot } = await makeDeltaTrees(dir);
  oldZip = path.join(dir, "old.zip");
  newZip = path.join(dir, "new.zip");
  const made = await zipBundle(oldRoot, oldZip);
  oldDigest = { sha256: made.sha256, sizeBytes: made.sizeBytes };
  await zipBundle(newRoot, newZip);
  newTree = await openZipBundleTree(newZip);
  const oldTree = await openZipBundleTree(oldZip);
  manifestBytes = serializeTreeManifest((await treeManifestOf(oldTree, "1.0.0", oldDigest))!);
  await oldTree.close();
});
afterAll(async () => {
  await newTree?.close();
  await rm(dir, { recursive: true, force: true });
});

describe("a release's tree manifest", () => {
  it("describes the unpacked tree as Python sees it: paths, kinds, modes, sizes, SHA-1s, link targets, and Sparkle's tree hash", async () => {
    const unpacked = await extractBundleZip(oldZip, path.join(dir, "old-unpacked"));
    const { manifest } = parseTreeManifest(manifestBytes, "tree.json");
    // An independent walk of the unpacked folder by Python (os.lstat, hashlib), and its Sparkle tree hash.
    const py = `
import hashlib, json, os, stat, sys
root = sys.argv[1]; out = {}
for d, dirs, files in os.walk(root):
    for n in dirs + files:
        p = os.path.join(d, n); st = os.lstat(p); rel = "/" + os.path.relpath(p, root)
        if stat.S_ISLNK(st.st_mode): out[rel] = ["symlink", stat.S_IMODE(st.st_mode), os.readlink(p), hashlib.sha1(os.readlink(p).encode()).hexdigest()]
        elif stat.S_ISDIR(st.st_mode): out[rel] = ["dir", stat.S_IMODE(st.st_mode)]
        else: out[rel] = ["file", stat.S_IMODE(st.st_mode), st.st_size, hashlib.sha1(open(p, "rb").read()).hexdigest()]
print(json.dumps(out))`;
    const seen = JSON.parse(execFileSync("python3", ["-c", py, unpacked], { encoding: "utf8" })) as Record<string, unknown[]>;
    const ours = Object.fromEntries(
      manifest.entries.map((e) => [e.path, e.kind === "dir" ? ["dir", e.mode] : e.kind === "file" ? ["file", e.mode, e.size, e.sha1] : ["symlink", e.mode, e.target, e.sha1]]),
    );
    // Python's lstat of a symlink on Linux gives 0777; Sparkle hashes links as 0755 and the zip keeps what was zipped.
    for (const [rel, v] of Object.entries(seen)) if (v[0] === "symlink") v[1] = (ours[rel] as unknown[])[1];
    expect(ours).toEqual(seen);
    expect(manifest.treeHash).toBe(execFileSync("python3", [path.join(here, "sparkle-tree-hash.py"), unpacked], { encoding: "utf8" }).trim());
    expect(manifest.zip).toEqual(oldDigest);
  });

  it("makes the very delta the full read of the old zip makes, reading by range only the entries it diffs", async () => {
    const spill = path.join(dir, "full-spill");
    const full = await readStoredZipTree(createReadStream(oldZip), { name: oldZip, newZip: newTree, spillFile: spill, keepLimit: 16 << 20, expected: oldDigest });
    const fromFull = path.join(dir, "full.delta");
    const summaryFull = await createDeltaFromTrees(full, newTree, fromFull, { compression: "lzma" });
    await full.close();

    ranges.length = 0;
    const tree = await manifestTree(manifestBytes);
    const fromManifest = path.join(dir, "manifest.delta");
    const summary = await createDeltaFromTrees(tree, newTree, fromManifest, { compression: "lzma" });
    const applied = await applyDeltaToTree(tree, fromManifest);
    await tree.close();
    expect(applied.afterHash).toBe(newTree.hash.toString("hex"));
    expect((await readFile(fromManifest)).equals(await readFile(fromFull))).toBe(true);
    expect(summary.counts).toEqual(summaryFull.counts);
    // Two reads (local header, then the bytes) per diffed file, each once: the applier's second read comes from the scratch file.
    expect(tree.fetchedCount()).toBe(summary.counts.diffed);
    expect(ranges.length).toBe(2 * summary.counts.diffed);
    // Only entries whose content the new tree does not have (changed files) were read.
    const { manifest } = parseTreeManifest(manifestBytes, "tree.json");
    const newHashes = new Set([...newTree.fileHashes].map(([, h]) => h.toString("hex")));
    const readEntries = manifest.entries.filter((e) => e.kind === "file" && ranges.some(([start]) => start === e.zip.offset));
    expect(readEntries.length).toBe(summary.counts.diffed);
    for (const e of readEntries) expect(e.kind === "file" && newHashes.has(e.sha1)).toBe(false);
  });

  it("is refused when it does not agree with itself: tree hash, order, paths, link hashes, unknown fields", () => {
    const m = JSON.parse(manifestBytes.toString()) as TreeManifest;
    const bytes = (x: unknown) => Buffer.from(JSON.stringify(x));
    expect(() => parseTreeManifest(bytes({ ...m, treeHash: "0".repeat(40) }), "t.json")).toThrow(/tree hash/);
    expect(() => parseTreeManifest(bytes({ ...m, entries: [...m.entries].reverse() }), "t.json")).toThrow(/out of order|not below a folder/);
    expect(() => parseTreeManifest(bytes({ ...m, entries: [{ path: "/../etc", kind: "dir", mode: 0o755 }] }), "t.json")).toThrow(/unsafe path/);
    const link = m.entries.findIndex((e) => e.kind === "symlink");
    const entries = m.entries.map((e, i) => (i === link ? { ...e, target: "/etc/passwd" } : e));
    expect(() => parseTreeManifest(bytes({ ...m, entries }), "t.json")).toThrow(/symlink .* not the hash of its target/);
    expect(() => parseTreeManifest(bytes({ ...m, extra: 1 }), "t.json")).toThrow(/not a valid tree manifest/);
    expect(() => parseTreeManifest(Buffer.from("{"), "t.json")).toThrow(/not JSON/);
  });

  it("never hands on bytes that differ from what it states: a consistent forgery of a diffed file's hash is caught when the file is read", async () => {
    const forgedBytes = forged((m) => {
      const exe = m.entries.find((e) => e.path === "/Contents/MacOS/Demo");
      if (exe?.kind !== "file") throw new Error("test bundle changed");
      exe.sha1 = createHash("sha1").update("something else").digest("hex");
    });
    const tree = await manifestTree(forgedBytes);
    try {
      await expect(createDeltaFromTrees(tree, newTree, path.join(dir, "forged.delta"), { compression: "lzma" })).rejects.toThrow(/does not match its tree manifest \(SHA-1 differs\)/);
    } finally {
      await tree.close();
    }
    const moved = forged((m) => {
      const exe = m.entries.find((e) => e.path === "/Contents/MacOS/Demo");
      if (exe?.kind !== "file") throw new Error("test bundle changed");
      exe.zip.offset += 1;
    });
    const tree2 = await manifestTree(moved);
    try {
      await expect(createDeltaFromTrees(tree2, newTree, path.join(dir, "moved.delta"), { compression: "lzma" })).rejects.toThrow(/no local header/);
    } finally {
      await tree2.close();
    }
  });

  it("is written to its file as it is made (no whole manifest in memory) with the very bytes of the in-memory form, and not at all for a bundle that can have none", async () => {
    const oldTree = await openZipBundleTree(oldZip);
    try {
      const file = path.join(dir, "streamed-tree.json");
      const written = await writeTreeManifest(oldTree, "1.0.0", oldDigest, file);
      const bytes = await readFile(file);
      expect(bytes.equals(manifestBytes)).toBe(true);
      expect(written).toEqual({ sizeBytes: bytes.length, sha256: createHash("sha256").update(bytes).digest("hex") });
    } finally {
      await oldTree.close();
    }
    // A resource-fork icon at the bundle's top: Sparkle skips it, so no manifest can describe the tree.
    const iconBundle = path.join(dir, "icon", "Icon.bundle");
    await mkdir(path.join(iconBundle, "Contents"), { recursive: true });
    await writeFile(path.join(iconBundle, "Icon\r"), "");
    await writeFile(path.join(iconBundle, "Contents", "Info.plist"), "<plist/>\n");
    const iconZip = path.join(dir, "icon.zip");
    const zipped = await zipBundle(iconBundle, iconZip);
    const iconTree = await openZipBundleTree(iconZip, { contentHashes: zipped.contentHashes });
    try {
      const file = path.join(dir, "icon-tree.json");
      expect(await writeTreeManifest(iconTree, "1.0.0", zipped, file)).toBeUndefined();
      await expect(stat(file)).rejects.toMatchObject({ code: "ENOENT" });
    } finally {
      await iconTree.close();
    }
  });
});
