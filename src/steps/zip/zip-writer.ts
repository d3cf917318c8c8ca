import { open, type FileHandle } from "node:fs/promises";
import { crc32 } from "node:zlib";
import { RelcastError } from "../../core/errors.js";
import { writeAll } from "../../core/write-all.js";
import { BytePool, float64Column, uint32Column, uint8Column } from "../../core/compact-columns.js";
import { centralHeader, endRecords, localHeader, METHOD_DEFLATE, METHOD_STORE, ZIP32_LIMIT, type EntryFields } from "./zip-format.js";

/** Sees the zip's final bytes once each, in file order (a SHA-256, the first pass of a signature). */
export interface ZipObserver {
  update(bytes: Buffer): void;
}

/** Bytes gathered before one positional write: few syscalls, and a local header usually patched in memory. */
const FLUSH_BYTES = 4 << 20;
const REREAD_BYTES = 1 << 20;

/**
 * The written entries as kept for the central directory: one column per
 * field and the names in one byte pool (a bundle of 100,000 files keeps no
 * object, string or buffer per entry; see core/compact-columns.ts).
 */
class WrittenEntries {
  private readonly names = new BytePool();
  private readonly methods = uint8Column();
  private readonly crcs = uint32Column();
  private readonly compressedSizes = float64Column();
  private readonly sizes = float64Column();
  private readonly modes = uint32Column();
  private readonly offsets = float64Column();
  private readonly zip64Locals = uint8Column();

  get length(): number {
    return this.names.length;
  }

  push(entry: EntryFields): void {
    this.names.push(entry.name);
    this.methods.push(entry.method);
    this.crcs.push(entry.crc32 >>> 0);
    this.compressedSizes.push(entry.compressedSize);
    this.sizes.push(entry.size);
    this.modes.push(entry.mode);
    this.offsets.push(entry.localHeaderOffset);
    this.zip64Locals.push(entry.zip64Local ? 1 : 0);
  }

  /** Entry `i` as fields again; its name is a view into the pool, valid until the next push. */
  fields(i: number): EntryFields {
    return { name: this.names.view(i), method: this.methods.get(i), crc32: this.crcs.get(i), compressedSize: this.compressedSizes.get(i), size: this.sizes.get(i), mode: this.modes.get(i), localHeaderOffset: this.offsets.get(i), zip64Local: this.zip64Locals.get(i) === 1 };
  }
}

/**
 * Writes a zip at explicit positions: a file's local header is written with
 * placeholders, its data follows, and the header is patched when the CRC and
 * sizes are known (no data descriptors: every reader, and relcast's own
 * streaming reader of old zips, finds the sizes in the local header). A file
 * that deflate does not shrink is rewritten stored, as Info-ZIP does. ZIP64
 * fields appear only where a value does not fit 32 bits (see zip-format.ts);
 * a file of 4 GiB or more, known from its listed size before its header is
 * written, gets a local header with a ZIP64 extra field.
 *
 * Observers get every byte of the finished zip in order while it is written,
 * so its digests need no second read: bytes before the open entry are final;
 * the open entry's bytes are fed when its header is patched, from memory, or
 * (for an entry larger than the write buffer) read back from the page cache.
 */
export class ZipWriter {
  private offset = 0;
  private readonly entries = new WrittenEntries();
  private open_: { entry: EntryFields; header: Buffer } | undefined;
  /**
   * Bytes [pendingStart, offset) not yet written to the file, copied here:
   * callers may reuse what they pass in (the chunk pool's frames) as soon as
   * an append returns, and the writer allocates nothing per entry or chunk.
   */
  private readonly pending = Buffer.allocUnsafeSlow(FLUSH_BYTES);
  private pendingStart = 0;
  private observedTo = 0;
  private reread: Buffer | undefined;

  private constructor(private readonly handle: FileHandle, private readonly observers: readonly ZipObserver[]) {}

  static async create(file: string, observers: readonly ZipObserver[] = []): Promise<ZipWriter> {
    // Read as well as write (observers are fed large entries back from the page cache); create-only,
    // since a finished zip may be handed over to a store as a hard link and must never be rewritten.
    return new ZipWriter(await open(file, "wx+"), observers);
  }

  private async append(bytes: Buffer): Promise<void> {
    for (let from = 0; from < bytes.length; ) {
      const copied = bytes.copy(this.pending, this.offset - this.pendingStart, from);
      from += copied;
      this.offset += copied;
      if (this.offset - this.pendingStart === FLUSH_BYTES) await this.flush();
    }
  }

  /** Writes the buffered bytes, first showing observers those already final (so they need no re-read). */
  private async flush(): Promise<void> {
    await this.observeUpTo(this.open_ ? this.open_.entry.localHeaderOffset : this.offset);
    await writeAll(this.handle, [this.pending.subarray(0, this.offset - this.pendingStart)], this.pendingStart);
    this.pendingStart = this.offset;
  }

  /** Feeds observers the bytes [observedTo, end): from the buffer, or read back where already written. */
  private async observeUpTo(end: number): Promise<void> {
    if (this.observers.length === 0) {
      this.observedTo = Math.max(this.observedTo, end);
      return;
    }
    if (this.observedTo < this.pendingStart && this.observedTo < end) {
      const upTo = Math.min(end, this.pendingStart);
      const buffer = (this.reread ??= Buffer.allocUnsafeSlow(REREAD_BYTES));
      while (this.observedTo < upTo) {
        const want = Math.min(REREAD_BYTES, upTo - this.observedTo);
        const { bytesRead } = await this.handle.read(buffer, 0, want, this.observedTo);
        if (bytesRead === 0) throw new Error("zip writer: the output file is shorter than what was written");
        for (const o of this.observers) o.update(buffer.subarray(0, bytesRead));
        this.observedTo += bytesRead;
      }
    }
    if (end > this.observedTo) {
      const part = this.pending.subarray(this.observedTo - this.pendingStart, end - this.pendingStart);
      for (const o of this.observers) o.update(part);
      this.observedTo = end;
    }
  }

  /** Drops what was written from `to` on (the open entry's data, to be written again stored). */
  private rewind(to: number): void {
    if (to < this.pendingStart) this.pendingStart = to;
    this.offset = to;
  }

  private async addWhole(nameText: string, mode: number, data: Buffer): Promise<void> {
    const entry: EntryFields = { name: Buffer.from(nameText, "utf8"), method: METHOD_STORE, crc32: crc32(data), compressedSize: data.length, size: data.length, mode, localHeaderOffset: this.offset, zip64Local: false };
    this.entries.push(entry);
    await this.append(localHeader(entry));
    await this.append(data);
  }

  addDirectory(name: string, mode: number): Promise<void> {
    return this.addWhole(name, 0o040000 | mode, Buffer.alloc(0));
  }

  /** `target`: the link's target (a string is stored as UTF-8). */
  addSymlink(name: string, target: string | Buffer, mode: number): Promise<void> {
    return this.addWhole(name, 0o120000 | mode, typeof target === "string" ? Buffer.from(target, "utf8") : target);
  }

  /** `size` is the file's size as listed; the chunk jobs refuse a file that is not that size any more. */
  async beginFile(name: string, mode: number, deflate: boolean, size: number): Promise<void> {
    const entry: EntryFields = { name: Buffer.from(name, "utf8"), method: deflate ? METHOD_DEFLATE : METHOD_STORE, crc32: 0, compressedSize: 0, size: 0, mode: 0o100000 | mode, localHeaderOffset: this.offset, zip64Local: size >= ZIP32_LIMIT };
    const header = localHeader(entry);
    this.open_ = { entry, header };
    await this.append(header);
  }

  /** `deflated` is the chunk's deflate output, or the raw bytes again for a stored file. */
  async appendChunk(raw: Buffer, deflated: Buffer): Promise<void> {
    const entry = this.open_!.entry;
    entry.crc32 = crc32(raw, entry.crc32);
    entry.size += raw.length;
    entry.compressedSize += deflated.length;
    await this.append(deflated);
  }

  /** `rawAgain` yields the file's bytes again; called only when deflate did not shrink them. */
  async endFile(rawAgain: () => AsyncIterable<Buffer>): Promise<void> {
    const { entry, header } = this.open_!;
    if (entry.method === METHOD_DEFLATE && entry.compressedSize >= entry.size) {
      this.rewind(entry.localHeaderOffset + header.length);
      entry.method = METHOD_STORE;
      entry.compressedSize = 0;
      for await (const chunk of rawAgain()) {
        entry.compressedSize += chunk.length;
        await this.append(chunk);
      }
    }
    // Deflate is kept only when it shrank the file, so the compressed size never needs ZIP64 when the size does not.
    if (!entry.zip64Local && (entry.size >= ZIP32_LIMIT || entry.compressedSize >= ZIP32_LIMIT)) {
      throw new RelcastError("E_INTERNAL", `zip writer: ${entry.name.toString()} grew to ${entry.size} bytes after it was listed smaller`);
    }
    const patched = localHeader(entry);
    if (patched.length !== header.length) throw new RelcastError("E_INTERNAL", "zip writer: a local header changed length");
    // The header may straddle a flush: its written part is patched in the file, the rest in the buffer.
    const written = Math.min(patched.length, Math.max(0, this.pendingStart - entry.localHeaderOffset));
    if (written > 0) await this.handle.write(patched, 0, written, entry.localHeaderOffset);
    if (written < patched.length) patched.copy(this.pending, entry.localHeaderOffset + written - this.pendingStart, written);
    this.open_ = undefined;
    this.entries.push(entry);
    await this.observeUpTo(this.offset);
  }

  async finish(): Promise<{ entryCount: number; sizeBytes: number }> {
    const centralOffset = this.offset;
    let centralSize = 0;
    for (let i = 0; i < this.entries.length; i++) {
      const bytes = centralHeader(this.entries.fields(i));
      centralSize += bytes.length;
      await this.append(bytes);
    }
    await this.append(endRecords(this.entries.length, centralSize, centralOffset));
    await this.flush();
    await this.observeUpTo(this.offset);
    await this.handle.truncate(this.offset);
    await this.handle.close();
    return { entryCount: this.entries.length, sizeBytes: this.offset };
  }

  async abort(): Promise<void> {
    await this.handle.close().catch(() => undefined);
  }
}
