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
export type CompressionName = "none" | "bzip2" | "lzma";
/** Level Sparkle records in the metadata byte for each mode. */
export const COMPRESSION_LEVEL: Record<CompressionName, number> = { none: 0, bzip2: 9, lzma: 6 };

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
  return code === Compression.none ? "none" : code === Compression.bzip2 ? "bzip2" : code === Compression.lzma ? "lzma" : undefined;
}
