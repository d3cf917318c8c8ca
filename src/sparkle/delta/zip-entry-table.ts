/**
 * A zip's central directory in table form: the entry names end to end in one
 * byte pool and each field (Unix mode, size, method, CRC-32, compressed size,
 * local header offset) in one typed array, index i of every column being
 * entry i in the directory's order. A 100,000-file bundle's directory is
 * then about 10 MB in a dozen allocations, where an object (and a string or
 * two) per entry held three times that and let V8's heap grow to several
 * times what is live, at the very step where a publish peaks.
 *
 * An entry is handed out as an object (`raw`) only when asked for, one at a
 * time, by whoever reads its bytes.
 */
import { BytePool, float64Column, uint32Column } from "../../core/compact-columns.js";
import { S_IFLNK, S_IFMT } from "./delta-format.js";

/** An entry as stored: enough to read its bytes, or to tell whether another zip holds the very same compressed bytes. */
export interface RawZipEntry {
  name: string;
  method: number;
  crc32: number;
  compressedSize: number;
  size: number;
  localHeaderOffset: number;
}

/** What a tree is laid out from (zip-layout.ts): each entry's name, Unix mode and size, by index. */
export interface ZipListing {
  readonly length: number;
  /** The entry's name as stored ("Demo.bundle/Contents/", "Demo.bundle/Contents/Info.plist"). */
  name(index: number): string;
  /** The name's bytes as stored (a view, valid until the next add): checked to be UTF-8 before `name` is trusted. */
  nameView(index: number): Buffer;
  /** st_mode from the Unix attributes, 0 when the zip has none. */
  unixMode(index: number): number;
  size(index: number): number;
}

export interface ZipEntryFields {
  unixMode: number;
  method: number;
  crc32: number;
  compressedSize: number;
  size: number;
  localHeaderOffset: number;
}

export class ZipEntryTable implements ZipListing {
  private readonly names = new BytePool();
  private readonly modes = uint32Column();
  private readonly methods = uint32Column();
  private readonly crcs = uint32Column();
  private readonly sizes = float64Column();
  private readonly compressedSizes = float64Column();
  private readonly offsets = float64Column();
  /** Bytes of all entry names, and of all symlink targets (their uncompressed sizes): what bounds a manifest of this zip. */
  nameBytes = 0;
  linkBytes = 0;

  get length(): number {
    return this.names.length;
  }

  /** Appends an entry (its name as UTF-8 bytes or a string); answers its index. */
  add(name: Uint8Array | string, fields: ZipEntryFields): number {
    const index = this.names.push(name);
    this.nameBytes += this.names.view(index).length;
    if ((fields.unixMode & S_IFMT) === S_IFLNK) this.linkBytes += fields.size;
    this.modes.push(fields.unixMode);
    this.methods.push(fields.method);
    this.crcs.push(fields.crc32 >>> 0);
    this.sizes.push(fields.size);
    this.compressedSizes.push(fields.compressedSize);
    this.offsets.push(fields.localHeaderOffset);
    return index;
  }

  name(index: number): string {
    return this.names.text(index);
  }

  nameView(index: number): Buffer {
    return this.names.view(index);
  }

  unixMode(index: number): number {
    return this.modes.get(index);
  }

  size(index: number): number {
    return this.sizes.get(index);
  }

  method(index: number): number {
    return this.methods.get(index);
  }

  crc32(index: number): number {
    return this.crcs.get(index);
  }

  compressedSize(index: number): number {
    return this.compressedSizes.get(index);
  }

  localHeaderOffset(index: number): number {
    return this.offsets.get(index);
  }

  /** Entry `index` as one object (made on each call: keep it only as long as it is used). */
  raw(index: number): RawZipEntry {
    return {
      name: this.name(index),
      method: this.method(index),
      crc32: this.crc32(index),
      compressedSize: this.compressedSize(index),
      size: this.size(index),
      localHeaderOffset: this.localHeaderOffset(index),
    };
  }
}
