import type { Readable } from "node:stream";
import yauzl from "yauzl";

/** One entry of a zip as an unzipper on macOS (ditto) would create it. */
export interface ZipEntryInfo {
  name: string;
  kind: "dir" | "file" | "symlink";
  /** Unix permission bits (0 when the zip carries no Unix attributes). */
  mode: number;
  size: number;
  /** For symlinks: the link target (the entry's content). */
  target?: string;
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

function kindOf(entry: yauzl.Entry): ZipEntryInfo["kind"] {
  const unixMode = entry.versionMadeBy >> 8 === MADE_BY_UNIX ? entry.externalFileAttributes >>> 16 : 0;
  if ((unixMode & S_IFMT) === S_IFLNK) return "symlink";
  if (entry.fileName.endsWith("/") || (unixMode & S_IFMT) === S_IFDIR) return "dir";
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
 * Lists every entry of a zip file (central directory, via yauzl) and reads
 * symlink targets plus the entries `wanted` selects. Throws on a zip that
 * is damaged or has unsafe names (absolute, `..`, backslashes).
 */
export async function readZipListing(file: string, wanted: (name: string) => boolean = () => false): Promise<ZipListing> {
  const zip = await new Promise<yauzl.ZipFile>((resolve, reject) => {
    yauzl.open(file, { lazyEntries: true, autoClose: false }, (err, z) => (err ? reject(err) : resolve(z)));
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
          const kind = kindOf(entry);
          const mode = entry.versionMadeBy >> 8 === MADE_BY_UNIX ? (entry.externalFileAttributes >>> 16) & 0o7777 : 0;
          const info: ZipEntryInfo = { name: entry.fileName, kind, mode, size: entry.uncompressedSize };
          if (kind === "symlink") info.target = (await readAll(await open(entry), MAX_READ_BYTES)).toString("utf8");
          else if (kind === "file" && wanted(entry.fileName)) files.set(entry.fileName, await readAll(await open(entry), MAX_READ_BYTES));
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
