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
import type { HashedTree, TreeEntry, TreeSource } from "./tree-hash.js";
import type { ManifestFile, ManifestTree, TreeManifest } from "./tree-manifest.js";

const LOCAL = 0x04034b50;
const inflateRawAsync = promisify(inflateRaw);

/** Bytes `start`..`end` (inclusive) of the release's zip. */
export type RangeReader = (start: number, end: number) => Promise<Buffer>;

export interface ManifestBackedTree extends HashedTree {
  /** Files whose bytes were read from the zip. */
  fetched: number;
  close(): Promise<void>;
}

export async function treeFromManifest(manifest: TreeManifest, tree: ManifestTree, options: { name: string; readRange: RangeReader; scratchFile: string }): Promise<ManifestBackedTree> {
  const { name, readRange } = options;
  const files = new Map<string, ManifestFile>();
  const targets = new Map<string, Buffer>();
  for (const e of manifest.entries) {
    if (e.kind === "file") files.set(e.path, e);
    else if (e.kind === "symlink") targets.set(e.path, Buffer.from(e.target, "utf8"));
  }
  const bad = (rel: string, why: string) =>
    new RelcastError("E_VERIFY", `${rel} in ${name} does not match its tree manifest (${why}); no delta is made from bytes that cannot be trusted`, "run `relcast verify` and restore that release; publish with --no-deltas to skip deltas meanwhile");
  let scratch: { fh: FileHandle; end: number } | undefined;
  const kept = new Map<string, { at: number; length: number }>();
  let fetched = 0;

  const fetch = async (file: ManifestFile): Promise<Buffer> => {
    const { zip } = file;
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
    if (createHash("sha1").update(bytes).digest("hex") !== file.sha1) throw bad(file.path, "SHA-1 differs");
    fetched++;
    return bytes;
  };

  const readFile = async (entry: TreeEntry): Promise<Buffer> => {
    const file = files.get(entry.rel);
    if (!file) throw new RelcastError("E_INTERNAL", `${entry.rel} is not a file of ${name}'s manifest`);
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
      const target = targets.get(entry.rel);
      if (!target) throw new RelcastError("E_INTERNAL", `${entry.rel} is not a symlink of ${name}'s manifest`);
      return target;
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
