/**
 * Constants of Sparkle's binary delta container, major version 3 (Sparkle 2's
 * SPUSparkleDeltaArchive; shared by the writer and the reader as Sparkle shares
 * SPUDeltaArchiveProtocol.h):
 *
 *   "spk!"  u8 compression  u8 metadata (bits 0-3 compression level, bit 7 file-system compression)
 *   then, through the chosen compression:
 *   u16 major (3)  u16 minor (1)  20-byte before-tree SHA-1  20-byte after-tree SHA-1
 *   u64 length of the path table, then the NUL-terminated relative paths
 *   one command record per item (below), then a 0 command as end marker
 *   the data of every extract/diff item, in item order
 *
 * All integers little-endian.
 */
export const DELTA_MAGIC = "spk!";
export const MAJOR_VERSION = 3;
export const MINOR_VERSION = 1;

export const Compression = { none: 0, bzip2: 1, lzma: 2, lzfse: 3, lz4: 4, zlib: 5 } as const;
/** The modes relcast writes and reads (Sparkle also reads lzfse and lz4, which only Apple's Compression framework writes). */
export const COMPRESSION_NAMES = ["lzma", "zlib", "bzip2", "none"] as const;
export type CompressionName = (typeof COMPRESSION_NAMES)[number];
/**
 * Level recorded in the metadata byte for each mode (Sparkle only reports it):
 * xz preset 6 and bzip2 block size 9 as Sparkle writes them; zlib 9, the level
 * relcast's DEFLATE encoder uses (Apple's, in Sparkle's own writer, is level 5).
 */
export const COMPRESSION_LEVEL: Record<CompressionName, number> = { none: 0, bzip2: 9, lzma: 6, zlib: 9 };

export const Command = {
  end: 0,
  delete: 1 << 0,
  extract: 1 << 1,
  modifyPermissions: 1 << 2,
  binaryDiff: 1 << 3,
  clone: 1 << 4,
} as const;

export const S_IFMT = 0o170000;
export const S_IFREG = 0o100000;
export const S_IFDIR = 0o040000;
export const S_IFLNK = 0o120000;

export function compressionName(code: number): CompressionName | undefined {
  return COMPRESSION_NAMES.find((name) => Compression[name] === code);
}
