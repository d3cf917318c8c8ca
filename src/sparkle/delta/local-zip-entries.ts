/**
 * The bytes of a zip on this machine's disk, entry by entry, from the places
 * its central directory gives (RawZipEntry): nothing is held per entry but
 * where its data starts once it has been read. Inflated bytes are checked
 * against the entry's size and CRC-32 before the last of them is handed on.
 */
import type { FileHandle } from "node:fs/promises";
import { pipeline, Readable } from "node:stream";
import { promisify } from "node:util";
import { crc32, createInflateRaw, inflateRaw } from "node:zlib";
import type { RawZipEntry } from "./zip-entry-table.js";
import { badZip } from "./zip-layout.js";

const LOCAL_HEADER = 0x04034b50;
const READ_CHUNK = 1 << 20;
/** An entry this small (compressed, and inflated at most 8 times that) is inflated in one call. */
const ONE_SHOT_BYTES = 1 << 20;
const inflateRawAsync = promisify(inflateRaw);

export class LocalZipEntries {
  private readonly dataOffsets = new Map<number, number>();

  constructor(
    private readonly handle: FileHandle,
    private readonly file: string,
  ) {}

  /** Where an entry's compressed bytes start: after its local header, whose method and CRC-32 must be the directory's. */
  async dataOffset(entry: RawZipEntry): Promise<number> {
    const known = this.dataOffsets.get(entry.localHeaderOffset);
    if (known !== undefined) return known;
    const head = Buffer.alloc(30);
    const { bytesRead } = await this.handle.read(head, 0, 30, entry.localHeaderOffset);
    if (bytesRead !== 30 || head.readUInt32LE(0) !== LOCAL_HEADER) throw badZip(this.file, `no local header for ${entry.name}`);
    if (head.readUInt16LE(8) !== entry.method || head.readUInt32LE(14) !== entry.crc32) throw badZip(this.file, `the local header of ${entry.name} differs from its central directory entry`);
    const at = entry.localHeaderOffset + 30 + head.readUInt16LE(26) + head.readUInt16LE(28);
    this.dataOffsets.set(entry.localHeaderOffset, at);
    return at;
  }

  /** Fills `out` with the entry's compressed bytes from `at`. */
  async readInto(entry: RawZipEntry, at: number, out: Buffer): Promise<void> {
    if (at + out.length > entry.compressedSize) throw badZip(this.file, `a read past the end of ${entry.name}`);
    const start = (await this.dataOffset(entry)) + at;
    for (let done = 0; done < out.length; ) {
      const { bytesRead } = await this.handle.read(out, done, out.length - done, start + done);
      if (bytesRead === 0) throw badZip(this.file, `${entry.name} ends early`);
      done += bytesRead;
    }
  }

  private async *compressed(entry: RawZipEntry): AsyncGenerator<Buffer> {
    for (let at = 0; at < entry.compressedSize; at += READ_CHUNK) {
      const out = Buffer.allocUnsafe(Math.min(READ_CHUNK, entry.compressedSize - at));
      await this.readInto(entry, at, out);
      yield out;
    }
  }

  /** The entry's uncompressed bytes in chunks; throws (after the last chunk) when their size or CRC-32 is not the entry's. */
  async *inflated(entry: RawZipEntry): AsyncGenerator<Buffer> {
    if (entry.method !== 0 && entry.method !== 8) throw badZip(this.file, `${entry.name} uses compression method ${entry.method}`);
    let size = 0;
    let crc = 0;
    const check = (chunk: Buffer): Buffer => {
      size += chunk.length;
      if (size > entry.size) throw badZip(this.file, `${entry.name} is longer than its header says`);
      crc = crc32(chunk, crc);
      return chunk;
    };
    if (entry.method === 0) {
      for await (const chunk of this.compressed(entry)) yield check(chunk);
    } else if (entry.compressedSize <= ONE_SHOT_BYTES && entry.size <= ONE_SHOT_BYTES * 8) {
      const bytes = Buffer.allocUnsafe(entry.compressedSize);
      await this.readInto(entry, 0, bytes);
      let out: Buffer;
      try {
        out = await inflateRawAsync(bytes, { maxOutputLength: Math.max(1, entry.size) });
      } catch (err) {
        throw badZip(this.file, `${entry.name} does not inflate to ${entry.size} bytes: ${(err as Error).message}`);
      }
      yield check(out);
    } else {
      const inflater = createInflateRaw();
      pipeline(Readable.from(this.compressed(entry)), inflater, () => undefined);
      try {
        for await (const chunk of inflater) yield check(chunk as Buffer);
      } catch (err) {
        if ((err as { code?: string }).code === "E_INPUT") throw err;
        throw badZip(this.file, `${entry.name} does not inflate: ${(err as Error).message}`);
      } finally {
        inflater.destroy();
      }
    }
    if (size !== entry.size || crc >>> 0 !== entry.crc32 >>> 0) throw badZip(this.file, `${entry.name} inflates to other bytes than its size and CRC-32 say`);
  }
}
