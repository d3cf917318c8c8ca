/**
 * The tree a bundle zip unpacks to, worked out from its entry list alone (no
 * unpacking): what `extractBundleZip` would lay out on disk, as tree entries
 * in Sparkle's fts order. Same rules as the unpacker: one top-level folder
 * (the bundle, whose contents become the tree), modes from the Unix
 * attributes (folders without an entry or attributes 0755, files 0644),
 * and no absolute names, "..", backslashes, duplicates or entries below a
 * symlink or a file. A link's target follows one rule everywhere a zip is
 * read ({@link zipLinkTargetProblem}): the listing shows an empty one here;
 * a NUL or bytes that are not UTF-8 are refused where the target is read
 * (the unpacker, the stored-zip scan).
 */
import { namePathProblem } from "../../core/entry-name-rule.js";
import { RelcastError } from "../../core/errors.js";
import { linkTargetBytesProblem, linkTargetLengthProblem, MAX_LINK_TARGET_BYTES } from "../../core/utf8-bytes.js";
import { S_IFDIR, S_IFLNK, S_IFREG } from "./delta-format.js";
import { type EntryKind, ftsOrder, type HashedTree, type TreeEntry } from "./tree-hash.js";
import { indexOfRel } from "./tree-table-hashes.js";
import { zipEntryKindProblem, zipNameBytesProblem } from "./zip-entry-rule.js";
import type { RawZipEntry, ZipListing } from "./zip-entry-table.js";

export interface ZipLayout {
  top: string;
  /** The tree's entries in fts order. */
  entries: TreeEntry[];
  /** zipIndex[i]: the listing index of tree entry i's zip entry; -1 for a folder the zip lists no entry for. */
  zipIndex: Int32Array;
}

/**
 * A tree's zip entries as stored, by tree path (binary search over the tree's
 * fts-sorted entries) or by tree index: a view over the directory's table, no
 * Map and no object kept per entry. Iterated in the tree's order, over the
 * entries the zip lists (not its top folder, not folders it only implies).
 */
export interface RawEntries extends Iterable<[string, RawZipEntry]> {
  get(rel: string): RawZipEntry | undefined;
  /** The zip entry of tree entry `index`; undefined for a folder the zip lists no entry for. */
  at(index: number): RawZipEntry | undefined;
}

export interface ZipBundleTree extends HashedTree {
  file: string;
  /** Raw entries by tree path or tree index. */
  raw: RawEntries;
  /** Content hash (SHA-1 of the bytes) of every file and link, by tree path. */
  contentHash(rel: string): Buffer | undefined;
  /** The compressed bytes of an entry, `length` from `at`. */
  readRaw(rel: string, at: number, length: number): Promise<Buffer>;
  /** Whether `bytes` equal the entry's compressed bytes from `at` (read into a reused buffer: no garbage per call). */
  equalsRaw(rel: string, at: number, bytes: Buffer): Promise<boolean>;
  close(): Promise<void>;
}

/** The most bytes a link target in a bundle zip may have (the one rule: core/utf8-bytes.ts, macOS's PATH_MAX less its NUL). */
export const MAX_LINK_TARGET = MAX_LINK_TARGET_BYTES;
const MADE_BY_UNIX = 3;

/** st_mode from a central directory entry's external attributes, 0 when not made on Unix. */
export function unixModeOf(versionMadeBy: number, externalFileAttributes: number): number {
  return versionMadeBy >> 8 === MADE_BY_UNIX ? externalFileAttributes >>> 16 : 0;
}

export function badZip(zip: string, why: string): RelcastError {
  return new RelcastError("E_INPUT", `Cannot read ${zip} as a bundle: ${why}.`, "Use the zip relcast published for that release, or a zip of the bundle as relcast publishes it (one top-level bundle folder; UTF-8 names without \\; modes its owner can read; links inside the bundle).");
}

/** Why a zip's symlink entry `name` with target bytes `target` cannot be unpacked as a link; undefined when it can. */
export function zipLinkTargetProblem(name: string, target: Buffer, options: { showBytes?: boolean } = {}): string | undefined {
  const problem = linkTargetBytesProblem(target, options);
  return problem && `symlink ${name} ${problem}`;
}

/** The tree path ("/Contents/Info.plist") of a zip entry name, without its top folder; "" for the top folder itself. */
export function relOfZipName(name: string): string {
  const trimmed = name.replace(/\/$/, "");
  const slash = trimmed.indexOf("/");
  return slash < 0 ? "" : trimmed.slice(slash);
}

/** The components of an entry name, refused when one is not a name (core/entry-name-rule.ts: "", ".", "..", "\\", NUL) or it is absolute. */
export function safeNameParts(zip: string, entryName: string): string[] {
  const name = entryName.replace(/\/$/, "");
  const parts = name.split("/");
  const why = name.startsWith("/") ? "is absolute" : namePathProblem(parts);
  if (why) throw badZip(zip, `unsafe entry name ${JSON.stringify(entryName)}: ${why}`);
  return parts;
}

/**
 * The tree a listing lays out, checked entry by entry in the listing's order
 * (so the first problem met is the one named). Nothing is kept per entry but
 * its TreeEntry and, in `zipIndex`, where its zip entry is; the map from path
 * to entry that the checks need lives only while this runs.
 */
export function layOutZip(zip: string, listing: ZipListing): ZipLayout {
  // Tree entries in the order first met, each with its listing index (-1: an implied folder).
  const made: TreeEntry[] = [];
  const zipOf: number[] = [];
  const position = new Map<string, number>();
  let top: string | undefined;
  const add = (rel: string, kind: EntryKind, perms: number, size: number, index: number): void => {
    const type = kind === "dir" ? S_IFDIR : kind === "symlink" ? S_IFLNK : S_IFREG;
    const entry: TreeEntry = { rel, abs: "", kind, perms, mode: type | perms, size, inode: "" };
    const known = position.get(rel);
    if (known === undefined) {
      position.set(rel, made.length);
      made.push(entry);
      zipOf.push(index);
    } else {
      // An implied folder given its own entry later: that entry's mode.
      made[known] = entry;
      zipOf[known] = index;
    }
  };
  for (let index = 0; index < listing.length; index++) {
    const nameBytes = zipNameBytesProblem(listing.nameView(index));
    if (nameBytes) throw badZip(zip, nameBytes);
    const itemName = listing.name(index);
    const parts = safeNameParts(zip, itemName);
    const name = parts.join("/");
    if (top === undefined) top = parts[0];
    else if (parts[0] !== top) throw badZip(zip, `more than one top-level entry (${top}, ${parts[0]})`);
    const kindAndPerms = zipEntryKindProblem(itemName, listing.unixMode(index), listing.size(index));
    if (typeof kindAndPerms === "string") throw badZip(zip, kindAndPerms);
    const { kind, perms } = kindAndPerms;
    if (parts.length === 1) {
      if (kind !== "dir") throw badZip(zip, `the top-level entry ${name} is not a folder`);
      continue;
    }
    const rel = `/${parts.slice(1).join("/")}`;
    // Parents, outermost first: implicit folders are made 0755; a parent that is a link or a file cannot hold entries.
    for (let slash = rel.indexOf("/", 1); slash > 0; slash = rel.indexOf("/", slash + 1)) {
      const parentRel = rel.slice(0, slash);
      const parent = position.get(parentRel);
      if (parent === undefined) add(parentRel, "dir", 0o755, 0, -1);
      else if (made[parent]!.kind !== "dir") throw badZip(zip, `${name} lies below the ${made[parent]!.kind === "symlink" ? "symlink" : "file"} ${parentRel.slice(1)}`);
    }
    const existing = position.get(rel);
    if (existing !== undefined && (zipOf[existing]! >= 0 || kind !== "dir")) throw badZip(zip, `duplicate entry ${name}`);
    const size = listing.size(index);
    // The target's length, known from the listing, is checked here by the one rule; its bytes where they are read.
    const byLength = kind === "symlink" ? linkTargetLengthProblem(size) : undefined;
    if (byLength) throw badZip(zip, `symlink ${name} ${byLength}`);
    add(rel, kind, perms, kind === "dir" ? 0 : size, index);
  }
  if (top === undefined) throw badZip(zip, "the zip is empty");
  position.clear();
  const order = Array.from(made.keys()).sort((a, b) => ftsOrder(made[a]!.rel, made[b]!.rel));
  const entries = order.map((i) => made[i]!);
  const zipIndex = Int32Array.from(order, (i) => zipOf[i]!);
  return { top, entries, zipIndex };
}

/** The view of {@link RawEntries} over a layout and the listing's table. */
export class LaidOutRawEntries implements RawEntries {
  constructor(
    private readonly entries: readonly TreeEntry[],
    private readonly zipIndex: Int32Array,
    private readonly table: { raw(index: number): RawZipEntry },
  ) {}

  at(index: number): RawZipEntry | undefined {
    const z = index >= 0 && index < this.zipIndex.length ? this.zipIndex[index]! : -1;
    return z >= 0 ? this.table.raw(z) : undefined;
  }

  get(rel: string): RawZipEntry | undefined {
    return this.at(indexOfRel(this.entries, rel));
  }

  *[Symbol.iterator](): Iterator<[string, RawZipEntry]> {
    for (let i = 0; i < this.entries.length; i++) {
      const raw = this.at(i);
      if (raw) yield [this.entries[i]!.rel, raw];
    }
  }
}
