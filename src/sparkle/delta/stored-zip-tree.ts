/**
 * An older release's zip read as a hashed tree in one streaming pass, straight
 * from the store (nothing unpacked): the same pass computes the zip's SHA-256
 * (checked against its record before anything read is used) and walks its
 * local entries.
 *
 * An entry whose method, CRC-32, sizes and compressed bytes (compared byte for
 * byte against the new zip's entry at the same path) equal the new zip's has
 * the same content, so it takes the new tree's content hash and is never
 * inflated. Any other entry is inflated and SHA-1 hashed; when small enough
 * to be diffed its bytes are kept in a scratch file, the only copy of old
 * content a delta needs. Modes come from the central directory at the end,
 * which must agree with the local headers.
 *
 * relcast's zips carry sizes in their local headers (no data descriptors),
 * in a ZIP64 extra field for a file of 4 GiB or more; a zip without them is
 * refused with a clear error. The end records (ZIP64 ones included) must
 * agree with the central directory read.
 */
import { createHash, type Hash } from "node:crypto";
import { open, type FileHandle } from "node:fs/promises";
import { promisify } from "node:util";
import { createInflateRaw, inflateRaw, type InflateRaw } from "node:zlib";
import { RelcastError } from "../../core/errors.js";
import { writeFullyAt } from "../../core/write-fully.js";
import { type RawZipEntry, ZipEntryTable } from "./zip-entry-table.js";
import { linkTargetBytesProblem } from "../../core/utf8-bytes.js";
import { badZip, layOutZip, MAX_LINK_TARGET, relOfZipName, unixModeOf, type ZipBundleTree } from "./zip-layout.js";
import { CUSTOM_ICON_PATH, type HashedTree, treeHashOf, type TreeEntry, type TreeSource } from "./tree-hash.js";
import { readU64, widenFields, ZIP64_END, ZIP64_LOCATOR, ZIP64_MARK } from "./zip64-fields.js";

const LOCAL = 0x04034b50;
const CENTRAL = 0x02014b50;
const END = 0x06054b50;
const METHOD_STORE = 0;
const METHOD_DEFLATE = 8;
/** The central directory is held in memory; a bundle's is far smaller. */
const MAX_TAIL_BYTES = 64 << 20;
const EMPTY_SHA1 = createHash("sha1").digest();
const ONE_SHOT_BYTES = 1 << 20;
const inflateRawAsync = promisify(inflateRaw);

/** Resolves at `event` or when the stream closes (an error is kept by the stream's own listener). */
function settled(stream: InflateRaw, event: "drain" | "end"): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      stream.off(event, done);
      stream.off("close", done);
      resolve();
    };
    stream.on(event, done);
    stream.on("close", done);
  });
}

export interface StoredZipTree extends HashedTree {
  sha256: string;
  sizeBytes: number;
  /** Entries whose bytes were compared equal to the new zip's (not inflated). */
  reused: number;
  /** Entries inflated and hashed. */
  inflated: number;
  /** Each entry as stored (name, method, CRC-32, sizes, local header offset), by tree path: what a tree manifest is checked against. */
  raw: Map<string, RawZipEntry>;
}

interface Scanned extends RawZipEntry {
  rel: string;
  /** Same compressed bytes as the new zip's entry at `rel`. */
  same: boolean;
  hash?: Buffer;
  /** Where the inflated bytes sit in the spill file. */
  spill?: { at: number; length: number };
  /** Why these bytes could not be a link's target (zip-layout.ts's rule), for an entry small enough to be one. */
  linkProblem?: string | undefined;
}

/** What the scan needs of the new zip: its raw entries, their bytes and content hashes. */
export type TwinZip = Pick<ZipBundleTree, "raw" | "equalsRaw" | "readRaw" | "contentHash" | "source">;

/** Reads one local entry's compressed bytes as they stream by. */
class EntryScan {
  private consumed = 0;
  private same: boolean;
  private inflater: InflateRaw | undefined;
  /** Made when the first inflated bytes come: most entries of a large bundle are unchanged and never need one. */
  private sha1: Hash | undefined;
  private inflatedBytes = 0;
  private spillAt: number | undefined;
  private pendingSpill: Promise<unknown> = Promise.resolve();
  private failed: Error | undefined;
  /** A small entry is inflated in one call from its gathered bytes (fewer events than a stream); its size is bounded. */
  private readonly oneShot: boolean;
  private readonly parts: Buffer[] = [];
  /**
   * The inflated bytes of an entry small enough to be a link, checked at the end against the link rule: whether
   * it is a link shows only in the central directory, after every entry has streamed by.
   */
  private readonly linkBytes: Buffer[] | undefined;

  constructor(
    readonly entry: Scanned,
    private readonly newZip: TwinZip | undefined,
    private readonly spill: { fh: FileHandle; end: number; file: string } | undefined,
    private readonly keepLimit: number,
    private readonly zipName: string,
  ) {
    const twin = newZip?.raw.get(entry.rel);
    this.same = !!twin && twin.method === entry.method && twin.crc32 === entry.crc32 && twin.compressedSize === entry.compressedSize && twin.size === entry.size;
    if (entry.method !== METHOD_STORE && entry.method !== METHOD_DEFLATE) throw badZip(zipName, `${entry.name} uses compression method ${entry.method}`);
    this.oneShot = entry.compressedSize <= ONE_SHOT_BYTES && entry.size <= ONE_SHOT_BYTES * 8;
    this.linkBytes = entry.size <= MAX_LINK_TARGET ? [] : undefined;
  }

  async write(bytes: Buffer): Promise<void> {
    if (this.same) {
      if (await this.newZip!.equalsRaw(this.entry.rel, this.consumed, bytes)) {
        this.consumed += bytes.length;
        return;
      }
      // Differs part way: the bytes before this chunk were the new zip's, so take them from there.
      this.same = false;
      for (let at = 0; at < this.consumed; at += 1 << 20) await this.feed(await this.newZip!.readRaw(this.entry.rel, at, Math.min(1 << 20, this.consumed - at)));
    }
    this.consumed += bytes.length;
    await this.feed(bytes);
  }

  private output(chunk: Buffer): void {
    (this.sha1 ??= createHash("sha1")).update(chunk);
    this.linkBytes?.push(Buffer.from(chunk));
    const spill = this.spill;
    if (spill && this.entry.size <= this.keepLimit) {
      if (this.spillAt === undefined) this.spillAt = spill.end;
      const at = spill.end;
      spill.end += chunk.length;
      const copy = Buffer.from(chunk);
      this.pendingSpill = this.pendingSpill.then(() => writeFullyAt(spill.fh, copy, at, spill.file));
    }
    this.inflatedBytes += chunk.length;
  }

  private async feed(bytes: Buffer): Promise<void> {
    if (this.entry.method === METHOD_STORE) {
      this.output(bytes);
      return;
    }
    if (this.oneShot) {
      this.parts.push(Buffer.from(bytes));
      return;
    }
    if (!this.inflater) {
      this.inflater = createInflateRaw();
      this.inflater.on("data", (chunk: Buffer) => this.output(chunk));
      this.inflater.on("error", (err) => (this.failed ??= err));
    }
    if (this.failed) throw badZip(this.zipName, `${this.entry.name} does not inflate: ${this.failed.message}`);
    if (!this.inflater.write(bytes)) await settled(this.inflater, "drain");
  }

  async finish(): Promise<void> {
    if (this.consumed !== this.entry.compressedSize) throw badZip(this.zipName, `${this.entry.name} ends early`);
    if (this.same) {
      this.entry.same = true;
      return;
    }
    if (this.entry.method === METHOD_DEFLATE && this.oneShot) {
      try {
        this.output(await inflateRawAsync(Buffer.concat(this.parts), { maxOutputLength: Math.max(1, this.entry.size) }));
      } catch (err) {
        throw badZip(this.zipName, `${this.entry.name} does not inflate to ${this.entry.size} bytes: ${(err as Error).message}`);
      }
    } else if (this.entry.method === METHOD_DEFLATE) {
      if (!this.inflater) await this.feed(Buffer.alloc(0));
      const ended = settled(this.inflater!, "end");
      this.inflater!.end();
      await ended;
      if (this.failed) throw badZip(this.zipName, `${this.entry.name} does not inflate: ${this.failed.message}`);
    }
    await this.pendingSpill;
    if (this.inflatedBytes !== this.entry.size) throw badZip(this.zipName, `${this.entry.name} inflates to ${this.inflatedBytes} bytes, not ${this.entry.size}`);
    this.entry.hash = this.sha1?.digest() ?? EMPTY_SHA1;
    // A fixed sentence (no string made per small file); most small files are simply not links.
    if (this.linkBytes) this.entry.linkProblem = linkTargetBytesProblem(this.linkBytes.length === 1 ? this.linkBytes[0]! : Buffer.concat(this.linkBytes), { showBytes: false });
    if (this.spill && this.entry.size <= this.keepLimit) this.entry.spill = { at: this.spillAt ?? this.spill.end, length: this.entry.size };
  }
}

/**
 * The records after the central directory: the ZIP64 end record and its
 * locator (when the zip has them) and the classic end record, which must
 * give the central directory's entry count, size and offset as read, and
 * end the zip.
 */
function checkEndRecords(name: string, bytes: Buffer, central: { count: number; size: number; offset: number }): void {
  let pos = 0;
  let wide: { count: number | undefined; size: number | undefined; offset: number | undefined } | undefined;
  if (bytes.length >= 56 && bytes.readUInt32LE(0) === ZIP64_END) {
    const recordLength = readU64(bytes, 4);
    if (recordLength === undefined || recordLength < 44 || 12 + recordLength + 20 > bytes.length) throw badZip(name, "its ZIP64 end record is damaged");
    wide = { count: readU64(bytes, 32), size: readU64(bytes, 40), offset: readU64(bytes, 48) };
    pos = 12 + recordLength;
    if (bytes.readUInt32LE(pos) !== ZIP64_LOCATOR || readU64(bytes, pos + 8) !== central.offset + central.size) throw badZip(name, "its ZIP64 end record has no locator pointing at it");
    pos += 20;
  }
  if (pos + 22 > bytes.length || bytes.readUInt32LE(pos) !== END) throw badZip(name, "its central directory is not followed by an end record");
  const count = bytes.readUInt16LE(pos + 10);
  const size = bytes.readUInt32LE(pos + 12);
  const offset = bytes.readUInt32LE(pos + 16);
  const end = pos + 22 + bytes.readUInt16LE(pos + 20);
  // A classic field holds its value, or (with a ZIP64 end record) all ones; the ZIP64 record then holds it.
  const agrees = (classic: number, mark: number, zip64: number | undefined, actual: number): boolean => (classic === mark && wide ? zip64 === actual : classic === actual && (!wide || zip64 === actual));
  if (!agrees(count, 0xffff, wide?.count, central.count) || !agrees(size, ZIP64_MARK, wide?.size, central.size) || !agrees(offset, ZIP64_MARK, wide?.offset, central.offset)) {
    throw badZip(name, "its end record does not describe its central directory");
  }
  if (end !== bytes.length) throw badZip(name, "bytes follow its end record");
}

export interface ReadStoredZipOptions {
  /** Name for messages (the store URI). */
  name: string;
  /** The new zip, whose entries are compared; without it every entry is inflated (hashing a zip of its own). */
  newZip?: TwinZip;
  /** Scratch file for the bytes of changed entries (created here; the caller removes it); without it none are kept. */
  spillFile?: string;
  /** Changed entries up to this size are kept (for diffing); larger ones are only hashed. */
  keepLimit: number;
  /** The SHA-256 (hex) and size the zip must have; nothing is used before it is checked. Only a zip relcast just wrote itself goes without. */
  expected?: { sha256: string; sizeBytes: number };
}

export async function readStoredZipTree(stream: AsyncIterable<Buffer>, options: ReadStoredZipOptions): Promise<StoredZipTree & { close(): Promise<void> }> {
  const { name, newZip } = options;
  const sha256 = options.expected ? createHash("sha256") : undefined;
  const spill = options.spillFile ? { fh: await open(options.spillFile, "wx+", 0o600), end: 0, file: options.spillFile } : undefined;
  try {
    const scanned = new Map<number, Scanned>();
    const tail: Buffer[] = [];
    let tailBytes = 0;
    let total = 0;
    let state: "header" | "data" | "tail" = "header";
    let left = Buffer.alloc(0);
    let offset = 0;
    let current: EntryScan | undefined;
    let remaining = 0;
    let tailStart = 0;
    for await (const chunk of stream) {
      sha256?.update(chunk);
      total += chunk.length;
      const data = left.length > 0 ? Buffer.concat([left, chunk]) : chunk;
      let pos = 0;
      while (pos < data.length) {
        if (state === "tail") {
          tailBytes += data.length - pos;
          if (tailBytes > MAX_TAIL_BYTES) throw badZip(name, "its central directory is over 64 MiB");
          tail.push(Buffer.from(data.subarray(pos)));
          pos = data.length;
        } else if (state === "data") {
          const take = Math.min(remaining, data.length - pos);
          await current!.write(data.subarray(pos, pos + take));
          pos += take;
          remaining -= take;
          if (remaining === 0) {
            await current!.finish();
            state = "header";
          }
        } else {
          if (data.length - pos < 4) break;
          const signature = data.readUInt32LE(pos);
          if (signature === CENTRAL || signature === END || signature === ZIP64_END) {
            state = "tail";
            tailStart = offset + pos;
            continue;
          }
          if (signature !== LOCAL) throw badZip(name, `no zip entry at byte ${offset + pos}`);
          if (data.length - pos < 30) break;
          const nameLength = data.readUInt16LE(pos + 26);
          const extraLength = data.readUInt16LE(pos + 28);
          if (data.length - pos < 30 + nameLength + extraLength) break;
          const flags = data.readUInt16LE(pos + 6);
          if (flags & 0x0009) throw badZip(name, "an entry is encrypted or has a data descriptor (relcast's zips have neither); publish with --no-deltas");
          const entryName = data.toString("utf8", pos + 30, pos + 30 + nameLength);
          const sizes = widenFields({ compressedSize: data.readUInt32LE(pos + 18), size: data.readUInt32LE(pos + 22) }, data.subarray(pos + 30 + nameLength, pos + 30 + nameLength + extraLength));
          if (typeof sizes === "string") throw badZip(name, `the local header of ${entryName}: ${sizes}`);
          const entry: Scanned = {
            name: entryName,
            method: data.readUInt16LE(pos + 8),
            crc32: data.readUInt32LE(pos + 14),
            compressedSize: sizes.compressedSize,
            size: sizes.size,
            localHeaderOffset: offset + pos,
            rel: "",
            same: false,
          };
          entry.rel = relOfZipName(entry.name);
          scanned.set(entry.localHeaderOffset, entry);
          current = new EntryScan(entry, newZip, spill, options.keepLimit, name);
          pos += 30 + nameLength + extraLength;
          remaining = entry.compressedSize;
          if (remaining === 0) await current.finish();
          else state = "data";
        }
      }
      offset += pos;
      left = pos < data.length ? Buffer.from(data.subarray(pos)) : Buffer.alloc(0);
    }
    const digest = sha256?.digest("hex") ?? "";
    if (options.expected && (digest !== options.expected.sha256 || total !== options.expected.sizeBytes)) {
      throw new RelcastError(
        "E_VERIFY",
        `${name} does not match its record (sha256 ${digest}, ${total} bytes; the record says ${options.expected.sha256}, ${options.expected.sizeBytes} bytes); no delta is made from a zip that cannot be trusted`,
        "run `relcast verify` and restore that release; publish with --no-deltas to skip deltas meanwhile",
      );
    }
    if (state !== "tail") throw badZip(name, "it ends inside an entry");

    // The central directory: every entry must be one of the local entries read above, with the same fields.
    const directory = Buffer.concat(tail);
    const listing = new ZipEntryTable();
    const byRel = new Map<string, Scanned>();
    let pos = 0;
    while (pos + 4 <= directory.length && directory.readUInt32LE(pos) === CENTRAL) {
      if (pos + 46 > directory.length) throw badZip(name, "its central directory ends early");
      const nameLength = directory.readUInt16LE(pos + 28);
      const extraLength = directory.readUInt16LE(pos + 30);
      const size = 46 + nameLength + extraLength + directory.readUInt16LE(pos + 32);
      if (pos + size > directory.length) throw badZip(name, "its central directory ends early");
      const entryName = directory.toString("utf8", pos + 46, pos + 46 + nameLength);
      const wide = widenFields(
        { size: directory.readUInt32LE(pos + 24), compressedSize: directory.readUInt32LE(pos + 20), localHeaderOffset: directory.readUInt32LE(pos + 42) },
        directory.subarray(pos + 46 + nameLength, pos + 46 + nameLength + extraLength),
      );
      if (typeof wide === "string") throw badZip(name, `its central directory entry ${JSON.stringify(entryName)}: ${wide}`);
      const local = scanned.get(wide.localHeaderOffset!);
      if (
        !local ||
        local.name !== entryName ||
        local.method !== directory.readUInt16LE(pos + 10) ||
        local.crc32 !== directory.readUInt32LE(pos + 16) ||
        local.compressedSize !== wide.compressedSize ||
        local.size !== wide.size
      ) {
        throw badZip(name, `its central directory entry ${JSON.stringify(entryName)} does not match a local entry`);
      }
      listing.add(entryName, { unixMode: unixModeOf(directory.readUInt16LE(pos + 4), directory.readUInt32LE(pos + 38)), method: local.method, crc32: local.crc32, compressedSize: local.compressedSize, size: local.size, localHeaderOffset: local.localHeaderOffset });
      if (local.rel) byRel.set(local.rel, local);
      pos += size;
    }
    if (listing.length !== scanned.size) throw badZip(name, `its central directory lists ${listing.length} entries, the zip holds ${scanned.size}`);
    checkEndRecords(name, directory.subarray(pos), { count: listing.length, size: pos, offset: tailStart });
    const layout = layOutZip(name, listing);

    const fileHashes = new Map<string, Buffer>();
    const linkHashes = new Map<string, Buffer>();
    let reused = 0;
    for (const entry of layout.entries) {
      if (entry.kind === "dir" || entry.rel === CUSTOM_ICON_PATH) continue;
      const s = byRel.get(entry.rel)!;
      if (entry.kind === "symlink" && s.linkProblem) throw badZip(name, `symlink ${s.name} ${s.linkProblem}`);
      // Same compressed bytes as an entry that is a folder in the new zip: both are empty.
      const hash = s.same ? (newZip!.contentHash(entry.rel) ?? (s.size === 0 ? EMPTY_SHA1 : undefined)) : s.hash;
      if (!hash) throw new RelcastError("E_INTERNAL", `no content hash for ${entry.rel} in ${name}`);
      if (s.same) reused++;
      (entry.kind === "file" ? fileHashes : linkHashes).set(entry.rel, hash);
    }

    const spilled = async (entry: TreeEntry): Promise<Buffer> => {
      const s = byRel.get(entry.rel);
      if (!s?.spill) throw new RelcastError("E_INTERNAL", `the bytes of ${entry.rel} in ${name} were not kept (${entry.size} bytes, over the diff limit)`);
      const out = Buffer.allocUnsafe(s.spill.length);
      const { bytesRead } = await spill!.fh.read(out, 0, out.length, s.spill.at);
      if (bytesRead !== out.length) throw new RelcastError("E_INTERNAL", `the kept bytes of ${entry.rel} are short`);
      return out;
    };
    const source: TreeSource = {
      readFile: (entry) => (byRel.get(entry.rel)?.same ? newZip!.source.readFile(entry) : spilled(entry)),
      readLink: (entry) => source.readFile(entry),
      async *streamFile(entry) {
        if (byRel.get(entry.rel)?.same) yield* newZip!.source.streamFile(entry);
        else yield await spilled(entry);
      },
    };
    const hash = treeHashOf(layout.entries, (e) => (e.kind === "file" ? fileHashes : linkHashes).get(e.rel)!);
    let inflated = 0;
    for (const s of scanned.values()) if (!s.same && s.compressedSize > 0) inflated++;
    // The scanned entries are the raw entries (a Scanned is a RawZipEntry): no second object per entry for a bundle of many files.
    const raw: Map<string, RawZipEntry> = byRel;
    return { hash, entries: layout.entries, fileHashes, linkHashes, source, raw, sha256: digest, sizeBytes: total, reused, inflated, close: async () => spill?.fh.close() };
  } catch (err) {
    await spill?.fh.close();
    throw err;
  }
}
