import { createHash, type Hash } from "node:crypto";
import { RelcastError } from "../../core/errors.js";
import { entryPath, listBundleEntries, type BundleEntry, type BundleListing } from "./bundle-entries.js";
import { ContentHashes } from "./content-hashes.js";
import { BUNDLE_CHANGED, CHUNK_BYTES, type ChunkJob } from "./chunk-job.js";
import { ChunkPool, WORKERS_FROM_BYTES, type PooledResult } from "./chunk-pool.js";
import { ZipWriter, type ZipObserver } from "./zip-writer.js";

// Permission bits only: the writer adds the file-type bits.
const DIR_MODE = 0o755;
const FILE_MODE = 0o644;
const EXEC_MODE = 0o755;
const LINK_MODE = 0o755;

export interface ZipResult {
  file: string;
  sizeBytes: number;
  sha256: string;
  entryCount: number;
  skipped: string[];
  /** The bundle's symlinks (zip entry name and target), to check the zip kept them. */
  symlinks: Array<{ name: string; target: string }>;
  /**
   * SHA-1 of every file's and symlink's bytes exactly as they went into the
   * zip, by zip entry name: what Sparkle's tree hash and a tree manifest need,
   * taken on the bytes read for the zip (no second read of the bundle or the zip);
   * a compact table, in zip order.
   */
  contentHashes: ContentHashes;
}

export interface ZipOptions {
  /** zlib level; 6 is Info-ZIP's default and ours. */
  level?: number;
  /** Also see the zip's bytes in order as they are written (e.g. the first pass of its signature). */
  observers?: readonly ZipObserver[];
  /** Run the chunk jobs on worker threads (default: when the bundle's files hold at least 8 MiB); the bytes are the same either way. */
  workers?: boolean;
}

/** Input bytes whose jobs may be queued ahead of the writer (and at most this many jobs): every core stays busy between small files; the memory they run in is the pool's fixed frames. */
const AHEAD_BYTES = 24 << 20;
const AHEAD_JOBS = 1024;

type FileEntry = Extract<BundleEntry, { kind: "file" }>;
type WorkItem = { entry: Exclude<BundleEntry, FileEntry> } | { entry: FileEntry; result: Promise<PooledResult>; first: boolean; last: boolean; length: number };

/** The job for the chunk of `entry` (lying in the bundle `bundleDir`) that starts at `offset`. */
function chunkJob(bundleDir: string, entry: FileEntry, offset: number, level: number, mode: ChunkJob["mode"]): ChunkJob {
  return { file: entryPath(bundleDir, entry.name), identity: entry.identity, offset, length: Math.min(CHUNK_BYTES, entry.size - offset), level, mode };
}

/**
 * Entries in zip order, each file cut into chunk jobs started as the item is
 * pulled. A file's first chunk decides whether it is deflated or stored; its
 * later chunks start once that is known.
 */
function* workItems(bundleDir: string, entries: BundleListing, level: number, pool: ChunkPool): Generator<WorkItem> {
  let priority = 0;
  for (const entry of entries) {
    if (entry.kind !== "file") {
      yield { entry };
      continue;
    }
    let first: Promise<PooledResult> | undefined;
    for (let offset = 0; offset === 0 || offset < entry.size; offset += CHUNK_BYTES) {
      const order = priority++;
      const result: Promise<PooledResult> = first === undefined
        ? pool.run(chunkJob(bundleDir, entry, offset, level, "auto"), order)
        : first.then((r) => pool.run(chunkJob(bundleDir, entry, offset, level, r.deflated ? "deflate" : "store"), order));
      first ??= result;
      result.catch(() => undefined); // awaited in order by the writer; this only stops an early rejection counting as unhandled
      const length = Math.min(CHUNK_BYTES, entry.size - offset);
      yield { entry, result, first: offset === 0, last: offset + length >= entry.size, length };
    }
  }
}

const asBuffer = (view: Uint8Array): Buffer => Buffer.from(view.buffer, view.byteOffset, view.byteLength);

/**
 * A file's bytes again, chunk by chunk through the same checked jobs, to
 * rewrite it stored. They must be the bytes first read (whose CRC-32 is in the
 * header and whose SHA-1 is the file's content hash): a file rewritten in
 * place between the two reads, even keeping its size and time, is refused.
 */
async function* rereadFile(pool: ChunkPool, bundleDir: string, entry: FileEntry, firstSha1: Buffer): AsyncGenerator<Buffer> {
  const again = createHash("sha1");
  for (let offset = 0; offset < entry.size; offset += CHUNK_BYTES) {
    const result = await pool.run(chunkJob(bundleDir, entry, offset, 0, "store"), -1);
    again.update(result.raw);
    yield asBuffer(result.raw); // the writer copies it before asking for the next one
    pool.release(result);
  }
  if (!again.digest().equals(firstSha1)) throw Object.assign(new Error(`${entryPath(bundleDir, entry.name)} changed while the bundle was being zipped`), { code: BUNDLE_CHANGED });
}

/** A file the build replaced, grew, shrank or swapped for a link while it was zipped: the user's to fix, named. */
function bundleChanged(err: unknown, bundleDir: string): unknown {
  const code = (err as NodeJS.ErrnoException).code;
  if (code !== BUNDLE_CHANGED && code !== "ELOOP" && code !== "ENOENT") return err;
  const what = code === "ELOOP" ? `${(err as Error).message} (a file became a link)` : (err as Error).message;
  return new RelcastError("E_INPUT", `the bundle ${bundleDir} changed while it was being zipped: ${what}`, "publish after the build has finished writing the bundle; nothing was written to the store");
}

/**
 * Zips the bundle folder (top folder kept) with sorted entries, fixed dates,
 * normalised permissions (755 for executables and folders, 644 otherwise),
 * symlinks stored as links, and no `._*`/`.DS_Store` junk. Reading and
 * deflating run on every core (a worker thread per core reads and compresses
 * chunks ahead) while the writer takes their results in order, so the bytes
 * never depend on timing.
 */
export async function zipBundle(bundleDir: string, outFile: string, options: ZipOptions = {}): Promise<ZipResult> {
  const { entries, skipped } = await listBundleEntries(bundleDir);
  const pool = ChunkPool.start(options.workers ?? entries.totalBytes >= WORKERS_FROM_BYTES);
  const sha256 = createHash("sha256");
  let writer: ZipWriter | undefined;
  try {
    writer = await ZipWriter.create(outFile, [sha256, ...(options.observers ?? [])]);
    const source = workItems(bundleDir, entries, options.level ?? 6, pool);
    const ahead: WorkItem[] = [];
    let aheadBytes = 0;
    const contentHashes = new ContentHashes();
    /** The SHA-1 of the open file when it spans several chunks (they arrive here in order); one chunk's file comes hashed by its job. */
    let fileHash: Hash | undefined;
    for (;;) {
      while (aheadBytes < AHEAD_BYTES && ahead.length < AHEAD_JOBS) {
        const next = source.next();
        if (next.done) break;
        ahead.push(next.value);
        if ("result" in next.value) aheadBytes += next.value.length;
      }
      const item = ahead.shift();
      if (item === undefined) break;
      if (!("result" in item)) {
        if (item.entry.kind === "dir") await writer.addDirectory(item.entry.name, DIR_MODE);
        else {
          const target = Buffer.from(item.entry.target, "utf8");
          contentHashes.add(item.entry.name, createHash("sha1").update(target).digest());
          await writer.addSymlink(item.entry.name, target, LINK_MODE);
        }
        continue;
      }
      const { entry, first, last } = item;
      const result = await item.result;
      aheadBytes -= item.length;
      const raw = asBuffer(result.raw);
      if (first) await writer.beginFile(entry.name, entry.executable ? EXEC_MODE : FILE_MODE, result.deflated !== undefined, entry.size);
      if (first && !last) fileHash = createHash("sha1");
      fileHash?.update(raw);
      await writer.appendChunk(raw, result.deflated ? asBuffer(result.deflated) : raw);
      pool.release(result); // the writer copied the bytes: the frame can take the next job
      if (last) {
        const sha1 = fileHash ? fileHash.digest() : Buffer.from(result.sha1!, "hex");
        fileHash = undefined;
        contentHashes.add(entry.name, sha1);
        await writer.endFile(() => rereadFile(pool, bundleDir, entry, sha1));
      }
    }
    const { entryCount, sizeBytes } = await writer.finish();
    const symlinks = entries.symlinks();
    return { file: outFile, sizeBytes, sha256: sha256.digest("hex"), entryCount, skipped, symlinks, contentHashes };
  } catch (err) {
    await writer?.abort();
    throw bundleChanged(err, bundleDir);
  } finally {
    await pool.close();
  }
}
