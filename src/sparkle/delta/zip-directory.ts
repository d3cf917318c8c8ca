/**
 * A stored zip's central directory read by range (yauzl over a reader that
 * fetches a few large windows from the end of the zip, so the end record and
 * the whole directory usually cost two reads): the entry list, each entry's
 * place, CRC-32 and sizes, and how many bytes the names take, in table form
 * (zip-entry-table.ts: no object per entry). What a tree
 * manifest states is checked against it before a publish trusts the manifest
 * (see manifest-binding.ts), and its size bounds how large a manifest for
 * this zip can be.
 */
import yauzl from "yauzl";
import { RelcastError } from "../../core/errors.js";
import { WindowReader } from "../window-reader.js";
import { ZipEntryTable } from "./zip-entry-table.js";
import { unixModeOf } from "./zip-layout.js";

/** Bytes `start`..`end` (inclusive) of the release's zip. */
export type RangeReader = (start: number, end: number) => Promise<Buffer>;

/** One read fetches at least this much (toward the end of the zip, where the directory is). */
const WINDOW = 8 << 20;

/** The directory's entries in its order (names, modes, places, CRC-32s and sizes), with the bytes their names and link targets take. */
export type ZipDirectory = ZipEntryTable;

/** The central directory of a `size`-byte zip; a RelcastError E_VERIFY naming `name` when it cannot be read. */
export async function readZipDirectory(readRange: RangeReader, size: number, name: string): Promise<ZipDirectory> {
  // Windows from where yauzl reads toward the end of the zip: the end record, then the whole directory, usually two fetches.
  const reader = new WindowReader({ size, fetch: (start, end) => readRange(start, end - 1) }, { windowBytes: WINDOW, keptWindows: 1 });
  const table = new ZipEntryTable();
  try {
    const zip = await yauzl.fromRandomAccessReaderPromise(reader, size, { lazyEntries: true, decodeStrings: false, validateEntrySizes: true, autoClose: false });
    try {
      await new Promise<void>((resolve, reject) => {
        zip.on("entry", (e: yauzl.Entry) => {
          // Names as UTF-8 bytes, kept as they are in the table's pool (read back as UTF-8, as relcast writes them and
          // as its streaming reader, stored-zip-tree.ts, reads them): yauzl would read a name without the UTF-8 flag
          // as CP437, turning "Icon\r" (a custom icon) into "Icon♪". The names' safety is checked where the tree is
          // laid out (zip-layout.ts).
          table.add(e.fileName as unknown as Buffer, {
            unixMode: unixModeOf(e.versionMadeBy, e.externalFileAttributes),
            method: e.compressionMethod,
            crc32: e.crc32,
            compressedSize: e.compressedSize,
            size: e.uncompressedSize,
            localHeaderOffset: e.relativeOffsetOfLocalHeader,
          });
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
  return table;
}
