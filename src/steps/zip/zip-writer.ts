import { open, type FileHandle } from "node:fs/promises";
import { crc32 } from "node:zlib";
import { RelcastError } from "../../core/errors.js";
import {
  centralHeader,
  endOfCentralDirectory,
  localHeader,
  localHeaderPatch,
  METHOD_DEFLATE,
  METHOD_STORE,
  ZIP32_LIMIT,
  ZIP32_MAX_ENTRIES,
  type EntryFields,
} from "./zip-format.js";

function tooLarge(what: string): RelcastError {
  return new RelcastError("E_INPUT", `the bundle is too large for a zip without ZIP64 (${what})`, "keep the bundle under 4 GiB and 65,535 entries; relcast writes classic zips, which every macOS unzipper reads");
}

/**
 * Writes a zip at explicit positions: a file's local header is written with
 * placeholders, its data follows, and the header is patched when the CRC and
 * sizes are known (no data descriptors). A file that deflate does not shrink
 * is rewritten stored, as Info-ZIP does.
 */
export class ZipWriter {
  private offset = 0;
  private readonly entries: EntryFields[] = [];
  private open_: EntryFields | undefined;

  private constructor(private readonly handle: FileHandle) {}

  static async create(file: string): Promise<ZipWriter> {
    return new ZipWriter(await open(file, "w"));
  }

  private async write(bytes: Buffer): Promise<void> {
    if (this.offset + bytes.length > ZIP32_LIMIT) throw tooLarge("more than 4 GiB of zip");
    let done = 0;
    while (done < bytes.length) {
      const { bytesWritten } = await this.handle.write(bytes, done, bytes.length - done, this.offset + done);
      done += bytesWritten;
    }
    this.offset += bytes.length;
  }

  private async addWhole(name: Buffer, mode: number, data: Buffer): Promise<void> {
    const entry: EntryFields = { name, method: METHOD_STORE, crc32: crc32(data), compressedSize: data.length, size: data.length, mode, localHeaderOffset: this.offset };
    await this.write(localHeader(entry));
    await this.write(data);
    this.entries.push(entry);
  }

  addDirectory(name: string, mode: number): Promise<void> {
    return this.addWhole(Buffer.from(name, "utf8"), 0o040000 | mode, Buffer.alloc(0));
  }

  addSymlink(name: string, target: string, mode: number): Promise<void> {
    return this.addWhole(Buffer.from(name, "utf8"), 0o120000 | mode, Buffer.from(target, "utf8"));
  }

  async beginFile(name: string, mode: number, deflate: boolean): Promise<void> {
    const entry: EntryFields = { name: Buffer.from(name, "utf8"), method: deflate ? METHOD_DEFLATE : METHOD_STORE, crc32: 0, compressedSize: 0, size: 0, mode: 0o100000 | mode, localHeaderOffset: this.offset };
    await this.write(localHeader(entry));
    this.open_ = entry;
  }

  /** `deflated` is the chunk's deflate output, or the raw bytes again for a stored file. */
  async appendChunk(raw: Buffer, deflated: Buffer): Promise<void> {
    const entry = this.open_!;
    entry.crc32 = crc32(raw, entry.crc32);
    entry.size += raw.length;
    entry.compressedSize += deflated.length;
    if (entry.size > ZIP32_LIMIT) throw tooLarge(`${entry.name.toString()} is over 4 GiB`);
    await this.write(deflated);
  }

  /** `rawAgain` yields the file's bytes again; called only when deflate did not shrink them. */
  async endFile(rawAgain: () => AsyncIterable<Buffer>): Promise<void> {
    const entry = this.open_!;
    this.open_ = undefined;
    if (entry.method === METHOD_DEFLATE && entry.compressedSize >= entry.size) {
      this.offset = entry.localHeaderOffset + 30 + entry.name.length;
      entry.method = METHOD_STORE;
      entry.compressedSize = 0;
      for await (const chunk of rawAgain()) {
        await this.write(chunk);
        entry.compressedSize += chunk.length;
      }
    }
    const patch = localHeaderPatch(entry);
    await this.handle.write(patch.bytes, 0, patch.bytes.length, patch.at);
    this.entries.push(entry);
  }

  async finish(): Promise<{ entryCount: number; sizeBytes: number }> {
    if (this.entries.length > ZIP32_MAX_ENTRIES) throw tooLarge(`${this.entries.length} entries`);
    const centralOffset = this.offset;
    const central = Buffer.concat(this.entries.map(centralHeader));
    await this.write(central);
    await this.write(endOfCentralDirectory(this.entries.length, central.length, centralOffset));
    await this.handle.truncate(this.offset);
    await this.handle.close();
    return { entryCount: this.entries.length, sizeBytes: this.offset };
  }

  async abort(): Promise<void> {
    await this.handle.close().catch(() => undefined);
  }
}
