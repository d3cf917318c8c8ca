import { createHash } from "node:crypto";
import { createReadStream, createWriteStream } from "node:fs";
import { Readable, Transform } from "node:stream";
import { pipeline } from "node:stream/promises";
import { ZipArchive } from "archiver";
import { listBundleEntries } from "./bundle-entries.js";

/** DOS time cannot go below 1980; every entry gets this instant so bytes depend only on content. */
export const ZIP_FIXED_DATE = new Date(Date.UTC(1980, 0, 1, 0, 0, 0));

// Permission bits only: the zip writer adds the file-type bits itself.
const DIR_MODE = 0o755;
const FILE_MODE = 0o644;
const EXEC_MODE = 0o755;
const LINK_MODE = 0o755;

/** Opens the file only when the zip writer reaches it (append() keeps entry order; file() does not). */
function lazyFileStream(file: string, onError: (err: Error) => void): Readable {
  async function* chunks() {
    for await (const chunk of createReadStream(file, { highWaterMark: 1 << 20 })) yield chunk as Buffer;
  }
  return Readable.from(chunks(), { objectMode: false }).on("error", onError);
}

export interface ZipResult {
  file: string;
  sizeBytes: number;
  sha256: string;
  entryCount: number;
  skipped: string[];
  /** The bundle's symlinks (zip entry name and target), to check the zip kept them. */
  symlinks: Array<{ name: string; target: string }>;
}

/**
 * Zips the bundle folder (top folder kept) with sorted entries, fixed dates,
 * normalised permissions (755 for executables and folders, 644 otherwise),
 * symlinks stored as links, and no `._*`/`.DS_Store` junk.
 */
export async function zipBundle(bundleDir: string, outFile: string, level = 6): Promise<ZipResult> {
  const { entries, skipped } = await listBundleEntries(bundleDir);
  const archive = new ZipArchive({ zlib: { level }, forceLocalTime: false, store: false });
  for (const entry of entries) {
    if (entry.kind === "dir") archive.append("", { name: entry.name, date: ZIP_FIXED_DATE, mode: DIR_MODE });
    else if (entry.kind === "symlink") {
      // archiver's symlink() stamps the current time; append() with type symlink takes our date.
      const data = { name: entry.name, type: "symlink", linkname: entry.target, date: ZIP_FIXED_DATE, mode: LINK_MODE };
      archive.append(Buffer.alloc(0), data as unknown as Parameters<ZipArchive["append"]>[1]);
    }
    else archive.append(lazyFileStream(entry.abs, (err) => archive.destroy(err)), { name: entry.name, date: ZIP_FIXED_DATE, mode: entry.executable ? EXEC_MODE : FILE_MODE });
  }
  const hash = createHash("sha256");
  let size = 0;
  const meter = new Transform({
    transform(chunk: Buffer, _enc, done) {
      hash.update(chunk);
      size += chunk.length;
      done(null, chunk);
    },
  });
  const finalized = archive.finalize();
  await Promise.all([pipeline(archive, meter, createWriteStream(outFile)), finalized]);
  const symlinks = entries.flatMap((e) => (e.kind === "symlink" ? [{ name: e.name, target: e.target }] : []));
  return { file: outFile, sizeBytes: size, sha256: hash.digest("hex"), entryCount: entries.length, skipped, symlinks };
}
