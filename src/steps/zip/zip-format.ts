/**
 * The byte layout of a zip, as APPNOTE.TXT §4.3 gives it: classic records,
 * with ZIP64 fields only where a value does not fit (§4.5.3), so a bundle
 * under 4 GiB and 65,535 entries gets the same bytes as a classic zip.
 * Entries are written the way Info-ZIP writes them on Unix (made by Unix,
 * mode in the high 16 bits of the external attributes), so `ditto`, `unzip`
 * and Sparkle's installer restore permissions and symlinks.
 */
export const METHOD_STORE = 0;
export const METHOD_DEFLATE = 8;
/** Bit 11: names are UTF-8. */
const FLAG_UTF8 = 0x0800;
const MADE_BY_UNIX = (3 << 8) | 30;
/** DOS date 1980-01-01, time 00:00:00: every entry gets it, so the bytes depend only on content. */
const DOS_TIME = 0;
const DOS_DATE = (0 << 9) | (1 << 5) | 1;
/** A 32-bit size or offset this large or larger is written as 0xffffffff with its value in the ZIP64 extra field. */
export const ZIP32_LIMIT = 0xffffffff;
/** An entry count this large or larger needs the ZIP64 end records (readers take 0xffff as "see ZIP64"). */
export const ZIP32_MAX_ENTRIES = 0xffff;
export const LOCAL_HEADER_FIXED = 30;
const ZIP64_EXTRA_TAG = 0x0001;
const VERSION_ZIP64 = 45;

export interface EntryFields {
  name: Buffer;
  method: number;
  crc32: number;
  compressedSize: number;
  size: number;
  /** Unix mode including the file-type bits (0o100644, 0o40755, 0o120755). */
  mode: number;
  localHeaderOffset: number;
  /**
   * The local header carries both sizes in a ZIP64 extra field: decided
   * before the data is written (from the file's size as listed), since the
   * header's length cannot change once data follows it.
   */
  zip64Local: boolean;
}

/** Whether an entry needs ZIP64 anywhere: its sizes, or where its local header starts. */
export function isZip64Entry(entry: EntryFields): boolean {
  return entry.zip64Local || entry.size >= ZIP32_LIMIT || entry.compressedSize >= ZIP32_LIMIT || entry.localHeaderOffset >= ZIP32_LIMIT;
}

function flagsFor(name: Buffer): number {
  return name.some((byte) => byte > 0x7f) ? FLAG_UTF8 : 0;
}

function versionNeeded(entry: EntryFields): number {
  if (isZip64Entry(entry)) return VERSION_ZIP64;
  return entry.method === METHOD_DEFLATE ? 20 : 10;
}

/** A ZIP64 extended information extra field holding `values` (each 8 bytes), in APPNOTE's order. */
function zip64Extra(values: readonly number[]): Buffer {
  const out = Buffer.alloc(4 + 8 * values.length);
  out.writeUInt16LE(ZIP64_EXTRA_TAG, 0);
  out.writeUInt16LE(8 * values.length, 2);
  values.forEach((v, i) => out.writeBigUInt64LE(BigInt(v), 4 + 8 * i));
  return out;
}

const field32 = (value: number): number => Math.min(value, ZIP32_LIMIT);

export function localHeader(entry: EntryFields): Buffer {
  const extra = entry.zip64Local ? zip64Extra([entry.size, entry.compressedSize]) : Buffer.alloc(0);
  const out = Buffer.alloc(LOCAL_HEADER_FIXED + entry.name.length + extra.length);
  out.writeUInt32LE(0x04034b50, 0);
  out.writeUInt16LE(versionNeeded(entry), 4);
  out.writeUInt16LE(flagsFor(entry.name), 6);
  out.writeUInt16LE(entry.method, 8);
  out.writeUInt16LE(DOS_TIME, 10);
  out.writeUInt16LE(DOS_DATE, 12);
  out.writeUInt32LE(entry.crc32 >>> 0, 14);
  // With a ZIP64 extra both sizes are 0xffffffff here (APPNOTE §4.5.3: the local extra holds both).
  out.writeUInt32LE(entry.zip64Local ? ZIP32_LIMIT : entry.compressedSize, 18);
  out.writeUInt32LE(entry.zip64Local ? ZIP32_LIMIT : entry.size, 22);
  out.writeUInt16LE(entry.name.length, 26);
  out.writeUInt16LE(extra.length, 28);
  entry.name.copy(out, LOCAL_HEADER_FIXED);
  extra.copy(out, LOCAL_HEADER_FIXED + entry.name.length);
  return out;
}

export function centralHeader(entry: EntryFields): Buffer {
  // Only the fields that do not fit go to the extra field, in this order.
  const wide = [entry.size, entry.compressedSize, entry.localHeaderOffset].filter((v) => v >= ZIP32_LIMIT);
  const extra = wide.length > 0 ? zip64Extra(wide) : Buffer.alloc(0);
  const out = Buffer.alloc(46 + entry.name.length + extra.length);
  out.writeUInt32LE(0x02014b50, 0);
  out.writeUInt16LE(MADE_BY_UNIX, 4);
  out.writeUInt16LE(versionNeeded(entry), 6);
  out.writeUInt16LE(flagsFor(entry.name), 8);
  out.writeUInt16LE(entry.method, 10);
  out.writeUInt16LE(DOS_TIME, 12);
  out.writeUInt16LE(DOS_DATE, 14);
  out.writeUInt32LE(entry.crc32 >>> 0, 16);
  out.writeUInt32LE(field32(entry.compressedSize), 20);
  out.writeUInt32LE(field32(entry.size), 24);
  out.writeUInt16LE(entry.name.length, 28);
  out.writeUInt16LE(extra.length, 30);
  // comment length, disk number start, internal attributes: 0
  const directoryBit = (entry.mode & 0o170000) === 0o040000 ? 0x10 : 0;
  out.writeUInt32LE(((entry.mode << 16) | directoryBit) >>> 0, 38);
  out.writeUInt32LE(field32(entry.localHeaderOffset), 42);
  entry.name.copy(out, 46);
  extra.copy(out, 46 + entry.name.length);
  return out;
}

/**
 * The end records after the central directory at `centralOffset`: the
 * classic end record alone, or (when the count, size or offset does not fit
 * it) the ZIP64 end record and its locator first, with the classic record's
 * overflowing fields set to all ones.
 */
export function endRecords(entryCount: number, centralSize: number, centralOffset: number): Buffer {
  const zip64 = entryCount >= ZIP32_MAX_ENTRIES || centralSize >= ZIP32_LIMIT || centralOffset >= ZIP32_LIMIT;
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(Math.min(entryCount, ZIP32_MAX_ENTRIES), 8);
  end.writeUInt16LE(Math.min(entryCount, ZIP32_MAX_ENTRIES), 10);
  end.writeUInt32LE(field32(centralSize), 12);
  end.writeUInt32LE(field32(centralOffset), 16);
  if (!zip64) return end;
  const record = Buffer.alloc(56);
  record.writeUInt32LE(0x06064b50, 0);
  record.writeBigUInt64LE(BigInt(record.length - 12), 4);
  record.writeUInt16LE(MADE_BY_UNIX, 12);
  record.writeUInt16LE(VERSION_ZIP64, 14);
  // this disk, disk of the central directory: 0
  record.writeBigUInt64LE(BigInt(entryCount), 24);
  record.writeBigUInt64LE(BigInt(entryCount), 32);
  record.writeBigUInt64LE(BigInt(centralSize), 40);
  record.writeBigUInt64LE(BigInt(centralOffset), 48);
  const locator = Buffer.alloc(20);
  locator.writeUInt32LE(0x07064b50, 0);
  locator.writeBigUInt64LE(BigInt(centralOffset + centralSize), 8);
  locator.writeUInt32LE(1, 16);
  return Buffer.concat([record, locator, end]);
}
