/**
 * An older release's tree from its manifest, with the bytes of a file read
 * only when a delta needs them (a file that changed and is diffed): its zip
 * entry is fetched by two ranged reads (the local header, then the
 * compressed bytes), inflated, and checked against the manifest's size,
 * CRC-32 and SHA-1 before use. Bytes read once are kept in a scratch file
 * (the applier reads them again), never in memory.
 */
import { createHash } from "node:crypto";
import { open, type FileHandle } from "node:fs/promises";
import { promisify } from "node:util";
import { crc32, inflateRaw } from "node:zlib";
import { RelcastError } from "../../core/errors.js";
import { writeFullyAt } from "../../core/write-fully.js";
import type { ManifestTable } from "./manifest-table.js";
import type { HashedTree, TreeEntry, TreeSource } from "./tree-hash.js";
import { indexOfRel } from "./tree-table-hashes.js";
import type { ManifestTree } from "./tree-manifest-schema.js";

const LOCAL = 0x04034b50;
const inflateRawAsync = promisify(inflateRaw);

/** Bytes `start`..`end` (inclusive) of the release's zip. */
export type RangeReader = (start: number, end: number) => Promise<Buffer>;

export interface ManifestBackedTree extends HashedTree {
  /** Files whose bytes were read from the zip. */
  fetched: number;
  close(): Promise<void>;
}

/** `table` and `tree` as readManifestTable gives them (entry i of the tree is row i of the table). */
export async function treeFromManifest(table: ManifestTable, tree: ManifestTree, options: { name: string; readRange: RangeReader; scratchFile: string }): Promise<ManifestBackedTree> {
  const { name, readRange } = options;
  // Files and links are found by binary search over the entries (fts order): no Map of every path.
  const rowOf = (rel: string, kind: "file" | "symlink"): number => {
    const i = indexOfRel(tree.entries, rel);
    return i >= 0 && tree.entries[i]!.kind === kind ? i : -1;
  };
  const bad = (rel: string, why: string) =>
    new RelcastError("E_VERIFY", `${rel} in ${name} does not match its tree manifest (${why}); no delta is made from bytes that cannot be trusted`, "run `relcast verify` and restore that release; publish with --no-deltas to skip deltas meanwhile");
  let scratch: { fh: FileHandle; end: number } | undefined;
  const kept = new Map<string, { at: number; length: number }>();
  let fetched = 0;

  const fetch = async (i: number): Promise<Buffer> => {
    const zip = table.place(i)!;
    const file = { path: tree.entries[i]!.rel, size: tree.entries[i]!.size };
    const nameBytes = Buffer.from(zip.name, "utf8");
    const head = await readRange(zip.offset, zip.offset + 29);
    if (head.length !== 30 || head.readUInt32LE(0) !== LOCAL) throw bad(file.path, `no local header at byte ${zip.offset}`);
    const nameLength = head.readUInt16LE(26);
    const dataAt = zip.offset + 30 + nameLength + head.readUInt16LE(28);
    if (head.readUInt16LE(8) !== zip.method || head.readUInt32LE(14) !== zip.crc32 || head.readUInt32LE(18) !== zip.compressedSize || head.readUInt32LE(22) !== file.size || nameLength !== nameBytes.length) {
      throw bad(file.path, "its local header differs");
    }
    const data = zip.compressedSize === 0 ? Buffer.alloc(0) : await readRange(dataAt - nameLength - head.readUInt16LE(28), dataAt + zip.compressedSize - 1);
    if (!data.subarray(0, nameLength).equals(nameBytes)) throw bad(file.path, "its local header names another entry");
    const compressed = data.subarray(dataAt - (zip.offset + 30));
    if (compressed.length !== zip.compressedSize) throw bad(file.path, "the zip ends early");
    let bytes: Buffer;
    try {
      bytes = zip.method === 0 ? compressed : await inflateRawAsync(compressed, { maxOutputLength: Math.max(1, file.size) });
    } catch (err) {
      throw bad(file.path, `it does not inflate: ${(err as Error).message}`);
    }
    if (bytes.length !== file.size || crc32(bytes) >>> 0 !== zip.crc32) throw bad(file.path, "size or CRC-32 differs");
    if (!createHash("sha1").update(bytes).digest().equals(table.sha1Of(i))) throw bad(file.path, "SHA-1 differs");
    fetched++;
    return bytes;
  };

  const readFile = async (entry: TreeEntry): Promise<Buffer> => {
    const file = rowOf(entry.rel, "file");
    if (file < 0) throw new RelcastError("E_INTERNAL", `${entry.rel} is not a file of ${name}'s manifest`);
    const at = kept.get(entry.rel);
    if (at && scratch) {
      const out = Buffer.allocUnsafe(at.length);
      const { bytesRead } = await scratch.fh.read(out, 0, at.length, at.at);
      if (bytesRead !== at.length) throw new RelcastError("E_INTERNAL", `the kept bytes of ${entry.rel} are short`);
      return out;
    }
    const bytes = await fetch(file);
    scratch ??= { fh: await open(options.scratchFile, "wx+", 0o600), end: 0 };
    kept.set(entry.rel, { at: scratch.end, length: bytes.length });
    scratch.end += bytes.length;
    await writeFullyAt(scratch.fh, bytes, scratch.end - bytes.length, options.scratchFile);
    return bytes;
  };
  const source: TreeSource = {
    readFile,
    async readLink(entry) {
      const i = rowOf(entry.rel, "symlink");
      const target = i < 0 ? undefined : table.target(i);
      if (target === undefined) throw new RelcastError("E_INTERNAL", `${entry.rel} is not a symlink of ${name}'s manifest`);
      return Buffer.from(target, "utf8");
    },
    async *streamFile(entry) {
      yield await readFile(entry);
    },
  };
  return {
    ...tree,
    source,
    get fetched() {
      return fetched;
    },
    close: async () => scratch?.fh.close(),
  };
}
