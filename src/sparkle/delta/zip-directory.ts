/**
 * A stored zip's central directory read by range (yauzl over a reader that
 * fetches a few large windows from the end of the zip, so the end record and
 * the whole directory usually cost two reads): the entry list, each entry's
 * place, CRC-32 and sizes, and how many bytes the names take. What a tree
 * manifest states is checked against it before a publish trusts the manifest
 * (see manifest-binding.ts), and its size bounds how large a manifest for
 * this zip can be.
 */
import yauzl from "yauzl";
import { RelcastError } from "../../core/errors.js";
import { WindowReader } from "../window-reader.js";
import { relOfZipName, unixModeOf, type RawZipEntry, type ZipListing } from "./zip-layout.js";

/** Bytes `start`..`end` (inclusive) of the release's zip. */
export type RangeReader = (start: number, end: number) => Promise<Buffer>;

/** One read fetches at least this much (toward the end of the zip, where the directory is). */
const WINDOW = 8 << 20;

export interface ZipDirectory {
  listing: ZipListing[];
  /** Raw entries by tree path. */
  raw: Map<string, RawZipEntry>;
  /** Bytes of all entry names, and of all symlink targets (their uncompressed sizes). */
  nameBytes: number;
  linkBytes: number;
}

/** The central directory of a `size`-byte zip; a RelcastError E_VERIFY naming `name` when it cannot be read. */
export async function readZipDirectory(readRange: RangeReader, size: number, name: string): Promise<ZipDirectory> {
  // Windows from where yauzl reads toward the end of the zip: the end record, then the whole directory, usually two fetches.
  const reader = new WindowReader({ size, fetch: (start, end) => readRange(start, end - 1) }, { windowBytes: WINDOW, keptWindows: 1 });
  const listing: ZipListing[] = [];
  const raw = new Map<string, RawZipEntry>();
  let nameBytes = 0;
  let linkBytes = 0;
  try {
    const zip = await yauzl.fromRandomAccessReaderPromise(reader, size, { lazyEntries: true, decodeStrings: false, validateEntrySizes: true, autoClose: false });
    try {
      await new Promise<void>((resolve, reject) => {
        zip.on("entry", (e: yauzl.Entry) => {
          // Names as UTF-8, as relcast writes them and as its streaming reader (stored-zip-tree.ts) reads them: yauzl
          // would read a name without the UTF-8 flag as CP437, turning "Icon\r" (a custom icon) into "Icon♪".
          // The names' safety is checked where the tree is laid out (zip-layout.ts).
          const fileName = (e.fileName as unknown as Buffer).toString("utf8");
          const unixMode = unixModeOf(e.versionMadeBy, e.externalFileAttributes);
          listing.push({ name: fileName, unixMode, size: e.uncompressedSize });
          nameBytes += Buffer.byteLength(fileName);
          if ((unixMode & 0o170000) === 0o120000) linkBytes += e.uncompressedSize;
          const rel = relOfZipName(fileName);
          if (rel) raw.set(rel, { name: fileName, method: e.compressionMethod, crc32: e.crc32, compressedSize: e.compressedSize, size: e.uncompressedSize, localHeaderOffset: e.relativeOffsetOfLocalHeader });
          zip.readEntry();
        });
        zip.once("end", () => resolve());
        zip.once("error", reject);
        zip.readEntry();
      });
    } finally {
      zip.close();
    }
  } catch (err) {
    throw new RelcastError("E_VERIFY", `the central directory of ${name} cannot be read: ${(err as Error).message}`, "run `relcast verify`");
  }
  return { listing, raw, nameBytes, linkBytes };
}
