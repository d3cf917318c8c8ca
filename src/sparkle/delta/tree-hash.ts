/**
 * Walks and hashes a bundle exactly as Sparkle's SUBinaryDeltaCommon does, so
 * an installed copy accepts our before/after hashes:
 * - fts order with FTS_PHYSICAL (links are not followed): a folder comes before
 *   its children, siblings sorted by strcmp of their names (C locale);
 * - the root itself and a root "/Icon\r" are skipped, as is anything that is
 *   not a file, folder or symlink;
 * - for every entry, SHA-1 is fed: the entry's content hash (SHA-1 of a file's
 *   bytes, of a link's target, or twenty 0xdd bytes for a folder), its path
 *   relative to the root starting with "/", its fts type as a little-endian
 *   uint16 (folder 1, file 8, symlink 12) and its permission bits as a
 *   little-endian uint16 (always 0755 for symlinks).
 */
import { createHash } from "node:crypto";
import type { Stats } from "node:fs";
import { lstat, open, readdir, readFile, readlink } from "node:fs/promises";
import path from "node:path";
import { RelcastError } from "../../core/errors.js";
import { compareUtf8 } from "../../core/utf8-order.js";

export type EntryKind = "dir" | "file" | "symlink";

export interface TreeEntry {
  /** Path relative to the root, starting with "/" (Sparkle's key). */
  rel: string;
  /** Where a folder tree's entry lies on disk ("" for a tree read from a zip). */
  abs: string;
  kind: EntryKind;
  /** Permission bits (mode & 07777). */
  perms: number;
  /** Full st_mode (type bits and permissions). */
  mode: number;
  size: number;
  /** "dev:ino", to recognise a hard link to a file already hashed ("" for a tree read from a zip). */
  inode: string;
}

/** Reads the bytes behind a tree's entries, wherever the tree lives (a folder, a zip). */
export interface TreeSource {
  /** A file's bytes, whole (only for files small enough to diff). */
  readFile(entry: TreeEntry): Promise<Buffer>;
  /** A file's bytes in chunks, for files of any size. */
  streamFile(entry: TreeEntry): AsyncIterable<Buffer>;
  readLink(entry: TreeEntry): Promise<Buffer>;
}

export const folderSource: TreeSource = {
  readFile: (entry) => readFile(entry.abs),
  streamFile: (entry) => streamFile(entry.abs, entry.size),
  readLink: (entry) => readlink(entry.abs, { encoding: "buffer" }),
};

async function* streamFile(abs: string, size: number): AsyncGenerator<Buffer> {
  const fh = await open(abs, "r");
  try {
    const chunk = Buffer.allocUnsafe(Math.min(READ_CHUNK, Math.max(size, 1)));
    for (let left = size; left > 0; ) {
      const { bytesRead } = await fh.read(chunk, 0, Math.min(chunk.length, left), null);
      if (bytesRead === 0) throw new RelcastError("E_INPUT", `${abs} shrank while relcast read it.`, "Do not change the bundle while relcast reads it.");
      yield Buffer.from(chunk.subarray(0, bytesRead));
      left -= bytesRead;
    }
  } finally {
    await fh.close();
  }
}

export const FTS_D = 1;
export const FTS_F = 8;
export const FTS_SL = 12;
export const PERMISSION_FLAGS = 0o7777;
export const SYMLINK_PERMISSIONS = 0o755;
export const CUSTOM_ICON_PATH = "/Icon\r";
const DIRECTORY_HASH = Buffer.alloc(20, 0xdd);

export function ftsType(kind: EntryKind): number {
  return kind === "dir" ? FTS_D : kind === "file" ? FTS_F : FTS_SL;
}

const byteOrder = (a: string, b: string): number => compareUtf8(a, b);

/** Entries below `root` in Sparkle's (fts) order. */
export async function walkTree(root: string): Promise<TreeEntry[]> {
  const out: TreeEntry[] = [];
  async function visit(abs: string, rel: string): Promise<void> {
    const names = (await readdir(abs)).sort(byteOrder);
    for (const name of names) {
      const childAbs = path.join(abs, name);
      const childRel = `${rel}/${name}`;
      const st = await lstat(childAbs);
      const kind: EntryKind | undefined = st.isSymbolicLink() ? "symlink" : st.isDirectory() ? "dir" : st.isFile() ? "file" : undefined;
      if (!kind) continue;
      out.push({ rel: childRel, abs: childAbs, kind, perms: st.mode & PERMISSION_FLAGS, mode: st.mode, size: kind === "dir" ? 0 : st.size, inode: `${st.dev}:${st.ino}` });
      if (kind === "dir") await visit(childAbs, childRel);
    }
  }
  await visit(path.resolve(root), "");
  return out;
}

const READ_CHUNK = 1 << 20;

/** SHA-1 of a file's bytes, read through one reused buffer. */
export async function sha1OfFile(abs: string, buffer: Buffer = Buffer.allocUnsafe(READ_CHUNK)): Promise<Buffer> {
  const hash = createHash("sha1");
  const fh = await open(abs, "r");
  try {
    for (;;) {
      const { bytesRead } = await fh.read(buffer, 0, buffer.length, null);
      if (bytesRead === 0) break;
      hash.update(buffer.subarray(0, bytesRead));
    }
  } finally {
    await fh.close();
  }
  return hash.digest();
}

export async function contentHash(entry: TreeEntry, buffer?: Buffer): Promise<Buffer> {
  if (entry.kind === "dir") return DIRECTORY_HASH;
  if (entry.kind === "symlink") return createHash("sha1").update(await readlink(entry.abs, { encoding: "buffer" })).digest();
  return sha1OfFile(entry.abs, buffer);
}

/** Content hashes by relative path, read-only: a Map, or a table (tree-table-hashes.ts). Iterated in the tree's order. */
export interface ContentHashes extends Iterable<[string, Buffer]> {
  readonly size: number;
  get(rel: string): Buffer | undefined;
  has(rel: string): boolean;
}

export interface HashedTree {
  /** Sparkle's tree hash (20 bytes). */
  hash: Buffer;
  entries: TreeEntry[];
  /** Content hash of every regular file, by relative path. */
  fileHashes: ContentHashes;
  /** Content hash of every symlink (SHA-1 of its target), by relative path. */
  linkHashes: ContentHashes;
  source: TreeSource;
}

/** Sparkle's tree hash of entries in fts order, given each file's and link's content hash. */
export function treeHashOf(entries: Iterable<Pick<TreeEntry, "rel" | "kind" | "perms">>, content: (entry: Pick<TreeEntry, "rel" | "kind">, index: number) => Buffer): Buffer {
  const tree = createHash("sha1");
  const u16 = Buffer.alloc(4);
  let index = -1;
  for (const entry of entries) {
    index++;
    if (entry.rel === CUSTOM_ICON_PATH) continue;
    tree.update(entry.kind === "dir" ? DIRECTORY_HASH : content(entry, index));
    tree.update(Buffer.from(entry.rel, "utf8"));
    u16.writeUInt16LE(ftsType(entry.kind), 0);
    u16.writeUInt16LE(entry.kind === "symlink" ? SYMLINK_PERMISSIONS : entry.perms, 2);
    tree.update(u16);
  }
  return tree.digest();
}

/** fts order of relative paths: a folder before its children, siblings by strcmp (a "/" sorts before any name byte). */
export function ftsOrder(a: string, b: string): number {
  return compareUtf8(a, b, true);
}

/**
 * `knownInodes`: content hashes of files by "dev:ino", for a tree whose
 * unchanged files are hard links into an already hashed one (the applier's
 * output, which never writes into a linked file: it replaces it).
 */
export async function hashTree(root: string, options: { knownInodes?: ReadonlyMap<string, Buffer> } = {}): Promise<HashedTree> {
  const entries = await walkTree(root);
  const fileHashes = new Map<string, Buffer>();
  const linkHashes = new Map<string, Buffer>();
  const buffer = Buffer.allocUnsafe(READ_CHUNK);
  for (const entry of entries) {
    if (entry.rel === CUSTOM_ICON_PATH || entry.kind === "dir") continue;
    const known = entry.kind === "file" ? options.knownInodes?.get(entry.inode) : undefined;
    (entry.kind === "file" ? fileHashes : linkHashes).set(entry.rel, known ?? (await contentHash(entry, buffer)));
  }
  const hash = treeHashOf(entries, (e) => (e.kind === "file" ? fileHashes : linkHashes).get(e.rel)!);
  return { hash, entries, fileHashes, linkHashes, source: folderSource };
}

/** Content hashes of a hashed tree's files by inode (see `hashTree`'s `knownInodes`). */
export function inodeHashes(tree: HashedTree): Map<string, Buffer> {
  const out = new Map<string, Buffer>();
  for (const e of tree.entries) if (e.kind === "file") out.set(e.inode, tree.fileHashes.get(e.rel)!);
  return out;
}

export async function treeHashHex(root: string): Promise<string> {
  return (await hashTree(root)).hash.toString("hex");
}

/** lstat that answers undefined for a missing path. */
export async function lstatOrUndefined(abs: string): Promise<Stats | undefined> {
  try {
    return await lstat(abs);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT" || (err as NodeJS.ErrnoException).code === "ENOTDIR") return undefined;
    throw err;
  }
}
