/**
 * The byte layout of a classic (non-ZIP64) zip, as APPNOTE.TXT §4.3 gives
 * it. Entries are written the way Info-ZIP writes them on Unix (made by
 * Unix, mode in the high 16 bits of the external attributes), so `ditto`,
 * `unzip` and Sparkle's installer restore permissions and symlinks.
 */
export const METHOD_STORE = 0;
export const METHOD_DEFLATE = 8;
/** Bit 11: names are UTF-8. */
const FLAG_UTF8 = 0x0800;
const MADE_BY_UNIX = (3 << 8) | 30;
/** DOS date 1980-01-01, time 00:00:00: every entry gets it, so the bytes depend only on content. */
const DOS_TIME = 0;
const DOS_DATE = (0 << 9) | (1 << 5) | 1;
export const ZIP32_LIMIT = 0xffffffff;
export const ZIP32_MAX_ENTRIES = 0xffff;
export const LOCAL_HEADER_FIXED = 30;

export interface EntryFields {
  name: Buffer;
  method: number;
  crc32: number;
  compressedSize: number;
  size: number;
  /** Unix mode including the file-type bits (0o100644, 0o40755, 0o120755). */
  mode: number;
  localHeaderOffset: number;
}

function flagsFor(name: Buffer): number {
  return name.some((byte) => byte > 0x7f) ? FLAG_UTF8 : 0;
}

function versionNeeded(method: number): number {
  return method === METHOD_DEFLATE ? 20 : 10;
}

export function localHeader(entry: EntryFields): Buffer {
  const out = Buffer.alloc(LOCAL_HEADER_FIXED + entry.name.length);
  out.writeUInt32LE(0x04034b50, 0);
  out.writeUInt16LE(versionNeeded(entry.method), 4);
  out.writeUInt16LE(flagsFor(entry.name), 6);
  out.writeUInt16LE(entry.method, 8);
  out.writeUInt16LE(DOS_TIME, 10);
  out.writeUInt16LE(DOS_DATE, 12);
  out.writeUInt32LE(entry.crc32 >>> 0, 14);
  out.writeUInt32LE(entry.compressedSize, 18);
  out.writeUInt32LE(entry.size, 22);
  out.writeUInt16LE(entry.name.length, 26);
  out.writeUInt16LE(0, 28);
  entry.name.copy(out, LOCAL_HEADER_FIXED);
  return out;
}

/** The fields of a local header known only after the data: version, method, CRC and sizes (offsets 4..25). */
export function localHeaderPatch(entry: EntryFields): { bytes: Buffer; at: number } {
  const full = localHeader(entry);
  return { bytes: full.subarray(4, 26), at: entry.localHeaderOffset + 4 };
}

export function centralHeader(entry: EntryFields): Buffer {
  const out = Buffer.alloc(46 + entry.name.length);
  out.writeUInt32LE(0x02014b50, 0);
  out.writeUInt16LE(MADE_BY_UNIX, 4);
  out.writeUInt16LE(versionNeeded(entry.method), 6);
  out.writeUInt16LE(flagsFor(entry.name), 8);
  out.writeUInt16LE(entry.method, 10);
  out.writeUInt16LE(DOS_TIME, 12);
  out.writeUInt16LE(DOS_DATE, 14);
  out.writeUInt32LE(entry.crc32 >>> 0, 16);
  out.writeUInt32LE(entry.compressedSize, 20);
  out.writeUInt32LE(entry.size, 24);
  out.writeUInt16LE(entry.name.length, 28);
  // extra length, comment length, disk number start, internal attributes: 0
  const directoryBit = (entry.mode & 0o170000) === 0o040000 ? 0x10 : 0;
  out.writeUInt32LE(((entry.mode << 16) | directoryBit) >>> 0, 38);
  out.writeUInt32LE(entry.localHeaderOffset, 42);
  entry.name.copy(out, 46);
  return out;
}

export function endOfCentralDirectory(entryCount: number, centralSize: number, centralOffset: number): Buffer {
  const out = Buffer.alloc(22);
  out.writeUInt32LE(0x06054b50, 0);
  out.writeUInt16LE(entryCount, 8);
  out.writeUInt16LE(entryCount, 10);
  out.writeUInt32LE(centralSize, 12);
  out.writeUInt32LE(centralOffset, 16);
  return out;
}
