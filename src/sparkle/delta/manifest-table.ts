/**
 * A stored tree manifest read into table form: one TreeEntry per entry (what
 * every tree has), and beside it columns instead of an object per entry: the
 * SHA-1s end to end in one Buffer, the zip names in one byte pool, offsets,
 * methods, CRC-32s and compressed sizes in typed arrays, link targets in a
 * small map (a bundle has few links). Index i of every column is entry i.
 *
 * The stored bytes are read one entry line at a time straight from the
 * Buffer (never one string of the whole manifest), each line checked by the
 * schema and then by `ManifestChecker` (safe paths in fts order, each below a
 * folder, places inside the zip, link hashes, the tree hash): the same checks
 * and messages as `parseTreeManifest`, which uses the same checker.
 */
import { createHash } from "node:crypto";
import { z } from "zod";
import { BytePool, float64Column, uint32Column, uint8Column } from "../../core/compact-columns.js";
import { RelcastError } from "../../core/errors.js";
import { S_IFDIR, S_IFLNK, S_IFREG } from "./delta-format.js";
import { ftsOrder, treeHashOf, type TreeEntry } from "./tree-hash.js";
import { HashSlots } from "./tree-table-hashes.js";
import { entrySchema, MANIFEST_HARD_CAP, type ManifestEntry, type ManifestHead, type ManifestTree, manifestText, treeManifestSchema } from "./tree-manifest-schema.js";

const MAX_ENTRIES = 10_000_000;
const SHA1_BYTES = 20;
const ENTRIES_OPEN = '  "entries": [\n';

/** The zip place of entry i (files and links; a folder has none). */
export interface ZipPlace {
  name: string;
  offset: number;
  method: number;
  crc32: number;
  compressedSize: number;
}

export class ManifestTable {
  readonly entries: TreeEntry[] = [];
  private sha1 = Buffer.alloc(64 * SHA1_BYTES);
  private readonly names = new BytePool();
  private readonly offsets = float64Column();
  private readonly methods = uint8Column();
  private readonly crcs = uint32Column();
  private readonly compressed = float64Column();
  private readonly targets = new Map<number, string>();

  get length(): number {
    return this.entries.length;
  }

  add(e: ManifestEntry, hash: Uint8Array | undefined): void {
    const i = this.entries.length;
    const type = e.kind === "dir" ? S_IFDIR : e.kind === "symlink" ? S_IFLNK : S_IFREG;
    this.entries.push({ rel: e.path, abs: "", kind: e.kind, perms: e.mode, mode: type | e.mode, size: e.kind === "file" ? e.size : e.kind === "symlink" ? Buffer.byteLength(e.target) : 0, inode: "" });
    if ((i + 1) * SHA1_BYTES > this.sha1.length) {
      const bigger = Buffer.alloc(this.sha1.length * 2);
      this.sha1.copy(bigger);
      this.sha1 = bigger;
    }
    if (hash) this.sha1.set(hash, i * SHA1_BYTES);
    const place = e.kind === "dir" ? undefined : e.zip;
    this.names.push(place?.name ?? "");
    this.offsets.push(place?.offset ?? 0);
    this.methods.push(place?.method ?? 0);
    this.crcs.push(place?.crc32 ?? 0);
    this.compressed.push(place?.compressedSize ?? 0);
    if (e.kind === "symlink") this.targets.set(i, e.target);
  }

  place(i: number): ZipPlace | undefined {
    if (this.entries[i]!.kind === "dir") return undefined;
    return { name: this.names.text(i), offset: this.offsets.get(i), method: this.methods.get(i), crc32: this.crcs.get(i), compressedSize: this.compressed.get(i) };
  }

  /** SHA-1 of entry i's bytes (a file) or target (a link). */
  sha1Of(i: number): Buffer {
    return this.sha1.subarray(i * SHA1_BYTES, (i + 1) * SHA1_BYTES);
  }

  target(i: number): string | undefined {
    return this.targets.get(i);
  }

  /** The content hashes as a tree has them (the same bytes, viewed by kind). */
  hashSlots(): HashSlots {
    const n = this.entries.length;
    const present = new Uint8Array(n);
    for (let i = 0; i < n; i++) present[i] = this.entries[i]!.kind === "dir" ? 0 : 1;
    return new HashSlots(this.entries, this.sha1.subarray(0, n * SHA1_BYTES), present);
  }
}

/** Checks entries as they come, in order, and keeps them in a table; `finish` checks the tree hash. */
export class ManifestChecker {
  readonly table = new ManifestTable();
  private previous: string | undefined;
  /** Folders open at this point of the walk (each an ancestor of the last entry, or its last folder). */
  private readonly open: string[] = [];

  constructor(private readonly head: ManifestHead, private readonly bad: (why: string) => RelcastError) {}

  add(e: ManifestEntry): void {
    const { bad } = this;
    const parts = e.path.slice(1).split("/");
    if (parts.some((p) => p === "" || p === "." || p === ".." || p.includes("\0") || p.includes("\\"))) throw bad(`unsafe path ${JSON.stringify(e.path)}`);
    if (this.previous !== undefined && ftsOrder(this.previous, e.path) >= 0) throw bad(`${JSON.stringify(e.path)} is out of order or listed twice`);
    this.previous = e.path;
    // In fts order everything between a folder and its child lies below the folder: it is still open here.
    while (this.open.length > 0 && !e.path.startsWith(`${this.open.at(-1)}/`)) this.open.pop();
    const parent = e.path.slice(0, e.path.lastIndexOf("/"));
    if (parent && this.open.at(-1) !== parent) throw bad(`${JSON.stringify(e.path)} is not below a folder of the manifest`);
    if (e.kind === "dir") this.open.push(e.path);
    // Every entry's bytes lie inside the zip: a place past its end is no place (and no ranged read is made for it).
    if (e.kind !== "dir" && e.zip.offset + 30 + Buffer.byteLength(e.zip.name) + e.zip.compressedSize > this.head.zip.sizeBytes) throw bad(`the zip entry of ${JSON.stringify(e.path)} lies past the end of the ${this.head.zip.sizeBytes}-byte zip`);
    let hash: Buffer | undefined;
    if (e.kind === "file") hash = Buffer.from(e.sha1, "hex");
    if (e.kind === "symlink") {
      hash = createHash("sha1").update(e.target, "utf8").digest();
      if (hash.toString("hex") !== e.sha1) throw bad(`the hash of symlink ${JSON.stringify(e.path)} is not the hash of its target`);
    }
    this.table.add(e, hash);
  }

  finish(): ManifestTree {
    const slots = this.table.hashSlots();
    const hash = treeHashOf(this.table.entries, (_e, i) => slots.at(i)!);
    if (hash.toString("hex") !== this.head.treeHash) throw this.bad(`its entries give tree hash ${hash.toString("hex")}, not the ${this.head.treeHash} it states`);
    return { hash, entries: this.table.entries, fileHashes: slots.view("file"), linkHashes: slots.view("symlink") };
  }
}

const issues = (error: z.ZodError, prefix: string): string => error.issues.slice(0, 3).map((i) => `${[prefix, ...i.path].filter((p) => p !== "").join(".") || "(root)"}: ${i.message}`).join("; ");

export interface ReadManifest {
  head: ManifestHead;
  table: ManifestTable;
  tree: ManifestTree;
}

/**
 * Stored bytes as a checked manifest table; with `keep`, the checked entries
 * as objects too (parseTreeManifest). Throws a RelcastError naming what is
 * wrong.
 */
export function readManifestTable(bytes: Buffer, name: string, maxBytes = MANIFEST_HARD_CAP, keep?: ManifestEntry[]): ReadManifest {
  const bad = (why: string) => new RelcastError("E_VERIFY", `${name} is not a valid tree manifest: ${why}`, "run `relcast verify`; publish reads that release's zip instead meanwhile");
  if (bytes.length > maxBytes) throw bad(`it is ${bytes.length} bytes, more than a manifest of its zip can be (${maxBytes})`);
  const take = (checker: ManifestChecker, e: ManifestEntry): void => {
    checker.add(e);
    keep?.push(e);
  };
  const lines = linewise(bytes, bad, take);
  if (lines) return lines;
  // Not relcast's layout after all: what the line-wise reading kept is read again from the whole text.
  keep?.splice(0);
  let raw: unknown;
  try {
    raw = JSON.parse(bytes.toString("utf8"));
  } catch {
    throw bad("it is not JSON");
  }
  const parsed = treeManifestSchema.safeParse(raw);
  if (!parsed.success) throw bad(issues(parsed.error, ""));
  const { entries, ...head } = parsed.data;
  const checker = new ManifestChecker(head, bad);
  for (const e of entries) take(checker, e);
  return { head, table: checker.table, tree: checker.finish() };
}

/**
 * The manifest's fields before its entries (`bytes` up to `open`, where the entries array starts), checked by
 * the schema with an empty entry list; undefined when they are not relcast's layout (the caller then reads
 * the manifest whole).
 */
function manifestHead(bytes: Buffer, open: number, bad: (why: string) => RelcastError) {
  let headRaw: unknown;
  try {
    headRaw = JSON.parse(`${bytes.toString("utf8", 0, open)}"entries": []}`);
  } catch {
    return undefined;
  }
  const parsedHead = treeManifestSchema.safeParse(headRaw);
  if (!parsedHead.success) throw bad(issues(parsedHead.error, ""));
  const { entries: _none, ...head } = parsedHead.data;
  return head;
}

/**
 * The line-wise reading, or undefined when the bytes are not in relcast's
 * layout (or are not JSON there): the head, with "entries" as its last key,
 * must parse as an object once closed, each entry line as a value of its own,
 * and the bytes must end as the writer ends them. Every text it accepts parses
 * as JSON to the same manifest. Lines split at ",\n" (ASCII: a UTF-8
 * sequence never holds those bytes, and JSON escapes a newline in a string).
 */
function linewise(bytes: Buffer, bad: (why: string) => RelcastError, take: (checker: ManifestChecker, e: ManifestEntry) => void): ReadManifest | undefined {
  const open = bytes.indexOf(ENTRIES_OPEN);
  const endBytes = Buffer.from(manifestText.end);
  if (open < 0 || bytes.length < endBytes.length || !bytes.subarray(bytes.length - endBytes.length).equals(endBytes)) return undefined;
  const head = manifestHead(bytes, open, bad);
  if (!head) return undefined;
  const checker = new ManifestChecker(head, bad);
  const end = bytes.length - endBytes.length;
  let count = 0;
  for (let at = open + ENTRIES_OPEN.length; at < end; ) {
    const next = bytes.indexOf(",\n", at);
    const stop = next < 0 || next > end ? end : next;
    let raw: unknown;
    try {
      raw = JSON.parse(bytes.toString("utf8", at, stop));
    } catch {
      return undefined;
    }
    const entry = entrySchema.safeParse(raw);
    if (!entry.success) throw bad(issues(entry.error, `entries.${count}`));
    take(checker, entry.data);
    if (++count > MAX_ENTRIES) throw bad(`entries: more than ${MAX_ENTRIES} entries`);
    at = stop === end ? end : stop + 2;
  }
  return { head, table: checker.table, tree: checker.finish() };
}

/** Bytes gathered before the entries open: a head is a few hundred bytes; more is not relcast's layout. */
const MAX_HEAD_BYTES = 64 << 10;

/**
 * The line-wise reading over a stream of the stored bytes: one entry line in
 * memory at a time, never the whole manifest (22 MB for 70,000 entries).
 * Answers undefined when the bytes are not in relcast's layout, having read
 * part of them: the caller then reads them whole (readManifestTable). Throws
 * as readManifestTable does, and when more than `maxBytes` arrive.
 */
export async function readManifestTableStream(chunks: AsyncIterable<Buffer>, name: string, maxBytes = MANIFEST_HARD_CAP): Promise<ReadManifest | undefined> {
  const bad = (why: string) => new RelcastError("E_VERIFY", `${name} is not a valid tree manifest: ${why}`, "run `relcast verify`; publish reads that release's zip instead meanwhile");
  const endBytes = Buffer.from(manifestText.end);
  let carry: Buffer = Buffer.alloc(0);
  let total = 0;
  let head: ManifestHead | undefined;
  let checker: ManifestChecker | undefined;
  let count = 0;
  const entryLine = (line: Buffer): boolean => {
    let raw: unknown;
    try {
      raw = JSON.parse(line.toString("utf8"));
    } catch {
      return false;
    }
    const entry = entrySchema.safeParse(raw);
    if (!entry.success) throw bad(issues(entry.error, `entries.${count}`));
    checker!.add(entry.data);
    if (++count > MAX_ENTRIES) throw bad(`entries: more than ${MAX_ENTRIES} entries`);
    return true;
  };
  for await (const chunk of chunks) {
    total += chunk.length;
    if (total > maxBytes) throw bad(`it is more than ${maxBytes} bytes, more than a manifest of its zip can be (${maxBytes})`);
    carry = carry.length === 0 ? chunk : Buffer.concat([carry, chunk]);
    if (!checker) {
      const open = carry.indexOf(ENTRIES_OPEN);
      if (open < 0) {
        if (carry.length > MAX_HEAD_BYTES) return undefined;
        continue;
      }
      head = manifestHead(carry, open, bad);
      if (!head) return undefined;
      checker = new ManifestChecker(head, bad);
      carry = carry.subarray(open + ENTRIES_OPEN.length);
    }
    // Every complete line but the last (which ends where the closing text starts, known only at the end).
    let at = 0;
    for (let next = carry.indexOf(",\n", at); next >= 0; next = carry.indexOf(",\n", at)) {
      if (!entryLine(carry.subarray(at, next))) return undefined;
      at = next + 2;
    }
    carry = at === 0 ? carry : Buffer.from(carry.subarray(at));
  }
  if (!checker || carry.length < endBytes.length || !carry.subarray(carry.length - endBytes.length).equals(endBytes)) return undefined;
  const last = carry.subarray(0, carry.length - endBytes.length);
  if (last.length > 0 ? !entryLine(last) : count > 0) return undefined;
  return { head: head!, table: checker.table, tree: checker.finish() };
}
