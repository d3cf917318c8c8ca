import { isUtf8 } from "node:buffer";
import type { Readable } from "node:stream";
import yauzl from "yauzl";
import { printableBytes } from "../core/utf8-bytes.js";
import { WindowReader } from "./window-reader.js";

/** One entry of a zip as an unzipper on macOS (ditto) would create it. */
export interface ZipEntryInfo {
  /** The name as stored, read as UTF-8 (when it is not UTF-8: shown with \xNN, and `nameNotUtf8` is set). */
  name: string;
  nameNotUtf8?: true;
  kind: "dir" | "file" | "symlink";
  /** Unix permission bits (0 when the zip carries no Unix attributes). */
  mode: number;
  size: number;
  /** For symlinks: the link target (the entry's content). */
  target?: string;
  /** For symlinks: the target's bytes as stored (the link rule reads bytes: core/utf8-bytes.ts). */
  targetBytes?: Buffer;
}

export interface ZipListing {
  entries: ZipEntryInfo[];
  /** Contents of the entries `wanted` asked for. */
  files: Map<string, Buffer>;
}

const S_IFMT = 0o170000;
const S_IFLNK = 0o120000;
const S_IFDIR = 0o040000;
const MADE_BY_UNIX = 3;
/** Info.plist files and link targets are small; anything larger is not read into memory. */
const MAX_READ_BYTES = 4 * 1024 * 1024;

function kindOf(entry: yauzl.Entry, name: string): ZipEntryInfo["kind"] {
  const unixMode = entry.versionMadeBy >> 8 === MADE_BY_UNIX ? entry.externalFileAttributes >>> 16 : 0;
  if ((unixMode & S_IFMT) === S_IFLNK) return "symlink";
  if (name.endsWith("/") || (unixMode & S_IFMT) === S_IFDIR) return "dir";
  return "file";
}

async function readAll(stream: Readable, limit: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of stream) {
    size += (chunk as Buffer).length;
    if (size > limit) {
      stream.destroy();
      throw new Error(`entry is larger than ${limit} bytes`);
    }
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

/**
 * A zip read by byte ranges (e.g. an object in a store): only the central
 * directory and the entries asked for are read, not the whole archive.
 */
export interface RangeSource {
  size: number;
  /** Bytes [start, end) (end exclusive). */
  openRange(start: number, end: number): Promise<Readable>;
}

/** A window of the range reader: yauzl reads the central directory in many small pieces. */
const WINDOW = { windowBytes: 256 * 1024, keptWindows: 8 };

async function collected(stream: Readable): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const part of stream) parts.push(part as Buffer);
  return Buffer.concat(parts);
}

/** A zip read by ranges, through the shared window reader; large entries stream from the source. */
function rangeReader(source: RangeSource): WindowReader {
  return new WindowReader({ size: source.size, fetch: async (start, end) => collected(await source.openRange(start, end)), stream: (start, end) => source.openRange(start, end) }, WINDOW);
}

/**
 * Lists every entry of a zip file (central directory, via yauzl) and reads
 * symlink targets plus the entries `wanted` selects. Throws on a zip that
 * is damaged or has unsafe names (absolute, `..`, backslashes).
 */
export async function readZipListing(file: string | RangeSource, wanted: (name: string) => boolean = () => false): Promise<ZipListing> {
  // Names as bytes, not decoded by yauzl (CP437 without the UTF-8 flag; backslashes turned into "/" and unsafe
  // names thrown): the zip rules (zip-rules.ts) judge the names as stored, by the same rule as the readers.
  const options = { lazyEntries: true, autoClose: false, decodeStrings: false };
  const zip = await new Promise<yauzl.ZipFile>((resolve, reject) => {
    const done = (err: Error | null, z: yauzl.ZipFile) => (err ? reject(err) : resolve(z));
    if (typeof file === "string") yauzl.open(file, options, done);
    else yauzl.fromRandomAccessReader(rangeReader(file), file.size, options, done);
  });
  const entries: ZipEntryInfo[] = [];
  const files = new Map<string, Buffer>();
  const open = (entry: yauzl.Entry) =>
    new Promise<Readable>((resolve, reject) => zip.openReadStream(entry, (err, s) => (err ? reject(err) : resolve(s))));
  try {
    await new Promise<void>((resolve, reject) => {
      zip.on("error", reject);
      zip.on("end", () => resolve());
      zip.on("entry", (entry: yauzl.Entry) => {
        void (async () => {
          const nameBytes = entry.fileName as unknown as Buffer;
          const utf8 = isUtf8(nameBytes);
          const name = utf8 ? nameBytes.toString("utf8") : printableBytes(nameBytes);
          const kind = kindOf(entry, name);
          const mode = entry.versionMadeBy >> 8 === MADE_BY_UNIX ? (entry.externalFileAttributes >>> 16) & 0o7777 : 0;
          const info: ZipEntryInfo = { name, kind, mode, size: entry.uncompressedSize, ...(utf8 ? {} : { nameNotUtf8: true as const }) };
          if (kind === "symlink") {
            info.targetBytes = await readAll(await open(entry), MAX_READ_BYTES);
            info.target = info.targetBytes.toString("utf8");
          } else if (kind === "file" && utf8 && wanted(name)) files.set(name, await readAll(await open(entry), MAX_READ_BYTES));
          entries.push(info);
          zip.readEntry();
        })().catch(reject);
      });
      zip.readEntry();
    });
  } finally {
    zip.close();
  }
  return { entries, files };
}
