/**
 * The tree a bundle zip unpacks to, worked out from its entry list alone (no
 * unpacking): what `extractBundleZip` would lay out on disk, as tree entries
 * in Sparkle's fts order. Same rules as the unpacker: one top-level folder
 * (the bundle, whose contents become the tree), modes from the Unix
 * attributes (folders without an entry or attributes 0755, files 0644),
 * and no absolute names, "..", backslashes, duplicates or entries below a
 * symlink or a file.
 */
import { RelcastError } from "../../core/errors.js";
import { S_IFDIR, S_IFLNK, S_IFMT, S_IFREG } from "./delta-format.js";
import { type EntryKind, ftsOrder, type HashedTree, PERMISSION_FLAGS, type TreeEntry } from "./tree-hash.js";

export interface ZipListing {
  /** The entry's name as stored ("Demo.bundle/Contents/", "Demo.bundle/Contents/Info.plist"). */
  name: string;
  /** st_mode from the Unix attributes, 0 when the zip has none. */
  unixMode: number;
  size: number;
}

export interface ZipLayout {
  top: string;
  entries: TreeEntry[];
  /** Zip entry name of each tree entry that has one, by relative path. */
  zipName: Map<string, string>;
}

/** An entry as stored: enough to tell whether another zip holds the very same compressed bytes. */
export interface RawZipEntry {
  name: string;
  method: number;
  crc32: number;
  compressedSize: number;
  size: number;
  localHeaderOffset: number;
}

export interface ZipBundleTree extends HashedTree {
  file: string;
  /** Raw entries by tree path. */
  raw: Map<string, RawZipEntry>;
  /** Content hash (SHA-1 of the bytes) of every file and link, by tree path. */
  contentHash(rel: string): Buffer | undefined;
  /** The compressed bytes of an entry, `length` from `at`. */
  readRaw(rel: string, at: number, length: number): Promise<Buffer>;
  /** Whether `bytes` equal the entry's compressed bytes from `at` (read into a reused buffer: no garbage per call). */
  equalsRaw(rel: string, at: number, bytes: Buffer): Promise<boolean>;
  close(): Promise<void>;
}

const MAX_LINK_TARGET = 4096;
const MADE_BY_UNIX = 3;

/** st_mode from a central directory entry's external attributes, 0 when not made on Unix. */
export function unixModeOf(versionMadeBy: number, externalFileAttributes: number): number {
  return versionMadeBy >> 8 === MADE_BY_UNIX ? externalFileAttributes >>> 16 : 0;
}

export function badZip(zip: string, why: string): RelcastError {
  return new RelcastError("E_INPUT", `Cannot read ${zip} as a bundle: ${why}.`, "Use the zip relcast published for that release (one top-level bundle folder, relative names).");
}

/** The tree path ("/Contents/Info.plist") of a zip entry name, without its top folder; "" for the top folder itself. */
export function relOfZipName(name: string): string {
  const trimmed = name.replace(/\/$/, "");
  const slash = trimmed.indexOf("/");
  return slash < 0 ? "" : trimmed.slice(slash);
}

/** The components of an entry name, refused when it could point outside the target folder. */
export function safeNameParts(zip: string, entryName: string): string[] {
  const name = entryName.replace(/\/$/, "");
  const parts = name.split("/");
  if (name === "" || name.startsWith("/") || name.includes("\\") || parts.some((p) => p === "" || p === "." || p === ".." || p.includes("\0"))) {
    throw badZip(zip, `unsafe entry name ${JSON.stringify(entryName)}`);
  }
  return parts;
}

export function layOutZip(zip: string, listing: readonly ZipListing[]): ZipLayout {
  const byRel = new Map<string, TreeEntry>();
  const zipName = new Map<string, string>();
  let top: string | undefined;
  const add = (rel: string, kind: EntryKind, perms: number, size: number): TreeEntry => {
    const type = kind === "dir" ? S_IFDIR : kind === "symlink" ? S_IFLNK : S_IFREG;
    const entry: TreeEntry = { rel, abs: "", kind, perms, mode: type | perms, size, inode: "" };
    byRel.set(rel, entry);
    return entry;
  };
  for (const item of listing) {
    const parts = safeNameParts(zip, item.name);
    const name = parts.join("/");
    if (top === undefined) top = parts[0];
    else if (parts[0] !== top) throw badZip(zip, `more than one top-level entry (${top}, ${parts[0]})`);
    const type = item.unixMode & S_IFMT;
    const kind: EntryKind = item.name.endsWith("/") || type === S_IFDIR ? "dir" : type === S_IFLNK ? "symlink" : "file";
    if (parts.length === 1) {
      if (kind !== "dir") throw badZip(zip, `the top-level entry ${name} is not a folder`);
      continue;
    }
    // Parents: implicit folders are made 0755; a parent that is a link or a file cannot hold entries.
    for (let i = 2; i < parts.length; i++) {
      const parentRel = `/${parts.slice(1, i).join("/")}`;
      const parent = byRel.get(parentRel);
      if (!parent) add(parentRel, "dir", 0o755, 0);
      else if (parent.kind !== "dir") throw badZip(zip, `${name} lies below the ${parent.kind === "symlink" ? "symlink" : "file"} ${parentRel.slice(1)}`);
    }
    const rel = `/${parts.slice(1).join("/")}`;
    const existing = byRel.get(rel);
    if (existing && (zipName.has(rel) || kind !== "dir")) throw badZip(zip, `duplicate entry ${name}`);
    if (kind === "symlink" && item.size > MAX_LINK_TARGET) throw badZip(zip, `symlink ${name} has a ${item.size}-byte target`);
    const perms = item.unixMode & PERMISSION_FLAGS || (kind === "dir" ? 0o755 : 0o644);
    add(rel, kind, perms, kind === "dir" ? 0 : item.size);
    zipName.set(rel, item.name);
  }
  if (top === undefined) throw badZip(zip, "the zip is empty");
  const entries = [...byRel.values()].sort((a, b) => ftsOrder(a.rel, b.rel));
  return { top, entries, zipName };
}
