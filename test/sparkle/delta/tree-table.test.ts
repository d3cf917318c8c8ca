// The delta trees in table form (content hashes in one buffer, manifests read into columns, entries found by
// binary search in fts order) must give what the folder walk gives (Maps by path, a sort of its own) for a tree
// whose names sort differently depending on how they are compared: non-ASCII, NFC next to NFD, characters above
// U+FFFF (UTF-16 surrogates sort below U+E000..U+FFFF, UTF-8 bytes above), "/" against "!" and "-", empty folders,
// symlinks, executable bits, and a file that becomes a folder and the reverse.
import { execFileSync } from "node:child_process";
import { chmod, mkdir, mkdtemp, readFile, rm, symlink, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { applyDelta } from "../../../src/sparkle/delta/delta-apply.js";
import { applyDeltaToTree } from "../../../src/sparkle/delta/delta-apply-tree.js";
import { createDelta, createDeltaFromTrees } from "../../../src/sparkle/delta/delta-create.js";
import { readManifestTable, readManifestTableStream } from "../../../src/sparkle/delta/manifest-table.js";
import { treeFromManifest } from "../../../src/sparkle/delta/manifest-tree.js";
import { hashTree } from "../../../src/sparkle/delta/tree-hash.js";
import { parseTreeManifest } from "../../../src/sparkle/delta/tree-manifest.js";
import { writeTreeManifest } from "../../../src/sparkle/delta/tree-manifest-writer.js";
import { openZipBundleTree } from "../../../src/sparkle/delta/zip-bundle-tree.js";
import { extractBundleZip } from "../../../src/sparkle/delta/zip-tree.js";
import { zipBundle } from "../../../src/steps/zip/reproducible-zip.js";
import { binaryish, describeTree } from "../../helpers/delta-trees.js";

const here = path.dirname(fileURLToPath(import.meta.url));
const pythonTreeHash = (root: string): string => execFileSync("python3", [path.join(here, "sparkle-tree-hash.py"), root], { encoding: "utf8" }).trim();

const NFC = "caf\u00e9";
/**
 * Decomposed (NFD) bytes beside the NFC name above, but not the same name once normalized: macOS's default file
 * system takes "café" in NFC and NFD for one name, and relcast refuses such a pair (preflight and the zip step).
 */
const NFD = "cafe\u0301s";
/** Above U+FFFF: a surrogate pair in UTF-16, which sorts before U+FB01 there but after it in UTF-8. */
const ASTRAL = "\u{1F600}";
const LIGATURE = "\uFB01le";

let dir: string;
let oldRoot: string;
let newRoot: string;
let oldZip: string;
let newZip: string;

async function put(root: string, rel: string, data: Buffer | string, mode = 0o644): Promise<void> {
  const abs = path.join(root, rel);
  await mkdir(path.dirname(abs), { recursive: true });
  await writeFile(abs, data);
  await chmod(abs, mode);
}

async function oddTree(root: string, version: 1 | 2): Promise<void> {
  const r = "Contents/Resources";
  await put(root, "Contents/Info.plist", `<plist>${version}</plist>\n`);
  await put(root, "Contents/MacOS/Demo", binaryish(20_000, version), 0o755);
  for (const name of [NFC, NFD, ASTRAL, LIGATURE, "Zeta", "alpha", "a b", "a-b", "a!"]) await put(root, `${r}/${name}.txt`, `${name} ${name === NFD || name === ASTRAL ? version : 1}\n`);
  await put(root, `${r}/a/inner.txt`, "below a folder that sorts before a! and a-b\n");
  await put(root, `${r}/${ASTRAL}/${NFC}/deep.dat`, binaryish(9000, 7 + version));
  await put(root, `${r}/${LIGATURE}/same.dat`, binaryish(9000, 20));
  await put(root, `${r}/tool.sh`, "#!/bin/sh\n", version === 1 ? 0o644 : 0o755);
  await mkdir(path.join(root, `${r}/empty-${version === 1 ? "old" : "new"}`), { recursive: true });
  await mkdir(path.join(root, `${r}/empty-both`), { recursive: true });
  await symlink(version === 1 ? `${NFC}.txt` : `${ASTRAL}.txt`, path.join(root, `${r}/link-${NFD}`));
  await symlink("../MacOS/Demo", path.join(root, `${r}/link-exe`));
  if (version === 1) {
    await put(root, `${r}/turns-into-folder`, "a file in 1\n");
    await put(root, `${r}/turns-into-file/${NFD}/x.txt`, "a folder in 1\n");
    await put(root, `${r}/turns-into-file/y.txt`, "a folder in 1\n");
  } else {
    await put(root, `${r}/turns-into-folder/${ASTRAL}.txt`, "a folder in 2\n");
    await put(root, `${r}/turns-into-file`, "a file in 2\n");
  }
}

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "relcast-tree-table-"));
  oldRoot = path.join(dir, "old", "Odd.bundle");
  newRoot = path.join(dir, "new", "Odd.bundle");
  await oddTree(oldRoot, 1);
  await oddTree(newRoot, 2);
  oldZip = path.join(dir, "old.zip");
  newZip = path.join(dir, "new.zip");
  await zipBundle(oldRoot, oldZip);
  await zipBundle(newRoot, newZip);
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** The old release as a later publish sees it: its manifest read into a table, its bytes by range from its zip. */
async function oldFromManifest() {
  const zipTree = await openZipBundleTree(oldZip);
  const manifestFile = path.join(dir, `tree-${Math.random().toString(36).slice(2)}.json`);
  const zipBytes = await readFile(oldZip);
  try {
    expect(await writeTreeManifest(zipTree, "1.0", { sha256: "0".repeat(64), sizeBytes: zipBytes.length }, manifestFile)).toBeDefined();
  } finally {
    await zipTree.close();
  }
  const bytes = await readFile(manifestFile);
  const { table, tree } = readManifestTable(bytes, "tree.json");
  const readRange = async (start: number, end: number) => zipBytes.subarray(start, end + 1);
  const opened = await treeFromManifest(table, tree, { name: oldZip, readRange, scratchFile: `${manifestFile}.kept` });
  return { opened, bytes };
}

async function* inPieces(bytes: Buffer, size: number): AsyncGenerator<Buffer> {
  for (let at = 0; at < bytes.length; at += size) yield bytes.subarray(at, at + size);
}

describe("delta trees in table form, for names that sort differently by how they are compared", () => {
  it("find every entry's content hash and give the folder walk's entries and tree hash (and Python's)", async () => {
    const folder = await hashTree(newRoot);
    const zipTree = await openZipBundleTree(newZip);
    try {
      const python = pythonTreeHash(newRoot);
      expect(folder.hash.toString("hex")).toBe(python);
      expect(zipTree.hash.toString("hex")).toBe(python);
      // (A link's own mode is whatever the file system gives it; Sparkle hashes every link as 0755.)
      const shape = (e: { rel: string; kind: string; perms: number; size: number }) => [e.rel, e.kind, e.kind === "symlink" ? 0o755 : e.perms, e.size];
      expect(zipTree.entries.map(shape)).toEqual(folder.entries.map(shape));
      // The table answers by binary search: every path, including the ones UTF-16 would misplace, is found.
      for (const [rel, hash] of folder.fileHashes) expect(zipTree.fileHashes.get(rel)?.equals(hash), rel).toBe(true);
      for (const [rel, hash] of folder.linkHashes) expect(zipTree.linkHashes.get(rel)?.equals(hash), rel).toBe(true);
      expect(new Map(zipTree.fileHashes)).toEqual(new Map(folder.fileHashes));
      expect(zipTree.fileHashes.get(`/Contents/Resources/${NFC}`)).toBeUndefined();
      expect(zipTree.fileHashes.get(`/Contents/Resources/link-${NFD}`)).toBeUndefined();
      expect(zipTree.linkHashes.get(`/Contents/Resources/link-${NFD}`)).toBeDefined();
    } finally {
      await zipTree.close();
    }
  });

  it("read a manifest into a table that holds what parseTreeManifest's objects hold", async () => {
    const { opened, bytes } = await oldFromManifest();
    try {
      const { manifest, tree } = parseTreeManifest(bytes, "tree.json");
      const { table } = readManifestTable(bytes, "tree.json");
      expect(tree.hash.toString("hex")).toBe(pythonTreeHash(oldRoot));
      expect(opened.hash.equals(tree.hash)).toBe(true);
      manifest.entries.forEach((e, i) => {
        expect(opened.entries[i]!.rel).toBe(e.path);
        if (e.kind === "dir") return expect(table.place(i)).toBeUndefined();
        expect(table.sha1Of(i).toString("hex")).toBe(e.sha1);
        expect(table.place(i)).toEqual({ name: e.zip.name, offset: e.zip.offset, method: e.zip.method, crc32: e.zip.crc32, compressedSize: e.zip.compressedSize });
        if (e.kind === "symlink") expect(table.target(i)).toBe(e.target);
      });
      // Streamed in pieces that split lines, ",\n" and multi-byte characters: the same table.
      for (const size of [1, 7, 64, 4096]) {
        const streamed = await readManifestTableStream(inPieces(bytes, size), "tree.json");
        expect(streamed!.tree.hash.equals(tree.hash)).toBe(true);
        expect(streamed!.tree.entries).toEqual(opened.entries);
        const { entries: _entries, ...head } = manifest;
        expect(streamed!.head).toEqual(head);
        manifest.entries.forEach((e, i) => e.kind !== "dir" && expect(streamed!.table.sha1Of(i).toString("hex")).toBe(e.sha1));
      }
      // Another layout (the same JSON, compact) is not read line by line: the caller reads it whole.
      const compact = Buffer.from(JSON.stringify(manifest));
      expect(await readManifestTableStream(inPieces(compact, 4096), "tree.json")).toBeUndefined();
      expect(readManifestTable(compact, "tree.json").tree.hash.equals(tree.hash)).toBe(true);
      await expect(readManifestTableStream(inPieces(bytes, 4096), "tree.json", 1000)).rejects.toThrow(/more than 1000 bytes/);
    } finally {
      await opened.close();
    }
  });

  it("make from the manifest's table and the zip the very delta two folder walks make, which both appliers apply", async () => {
    const { opened } = await oldFromManifest();
    const newTree = await openZipBundleTree(newZip);
    try {
      const fromTables = path.join(dir, "tables.delta");
      const fromFolders = path.join(dir, "folders.delta");
      const made = await createDeltaFromTrees(opened, newTree, fromTables, { compression: "none", tmpDir: dir });
      await createDelta(oldRoot, newRoot, fromFolders, { compression: "none", tmpDir: dir });
      expect((await readFile(fromTables)).equals(await readFile(fromFolders))).toBe(true);
      expect(made.counts.deleted).toBeGreaterThan(0);
      expect(made.counts.permissions).toBeGreaterThan(0);
      const inMemory = await applyDeltaToTree(opened, fromTables);
      expect(inMemory.afterHash).toBe(newTree.hash.toString("hex"));
      const oldUnpacked = await extractBundleZip(oldZip, path.join(dir, "old-unpacked"));
      const out = path.join(dir, "applied", "Odd.bundle");
      await applyDelta(oldUnpacked, out, fromTables);
      expect(await describeTree(out)).toEqual(await describeTree(newRoot));
      expect(pythonTreeHash(out)).toBe(pythonTreeHash(newRoot));
    } finally {
      await newTree.close();
      await opened.close();
    }
  });
});
