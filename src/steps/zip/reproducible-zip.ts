import { createHash } from "node:crypto";
import { createReadStream } from "node:fs";
import { listBundleEntries, type BundleEntry } from "./bundle-entries.js";
import { CHUNK_BYTES, deflatedChunks, type DeflatedChunk } from "./deflate-chunks.js";
import { DeflateSlots } from "./deflate-slots.js";
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
}

export interface ZipOptions {
  /** zlib level; 6 is Info-ZIP's default and ours. */
  level?: number;
  /** Also see the zip's bytes in order as they are written (e.g. the first pass of its signature). */
  observers?: readonly ZipObserver[];
}

/** Chunks read ahead of the writer: enough to keep every deflate slot busy between small files, 16 MiB of input at most. */
const AHEAD_ITEMS = Math.max(8, Math.floor((16 << 20) / CHUNK_BYTES));

type WorkItem = { entry: BundleEntry; chunk?: DeflatedChunk; first?: boolean };

/** Entries in zip order, with each file cut into chunks whose deflate starts as soon as the item is pulled. */
async function* workItems(entries: BundleEntry[], level: number, slots: DeflateSlots): AsyncGenerator<WorkItem> {
  for (const entry of entries) {
    if (entry.kind !== "file") {
      yield { entry };
      continue;
    }
    let first = true;
    for await (const chunk of deflatedChunks(entry.abs, entry.size, level, slots)) {
      yield { entry, chunk, first };
      first = false;
    }
  }
}

async function* rereadFile(file: string, size: number): AsyncGenerator<Buffer> {
  if (size === 0) return;
  for await (const chunk of createReadStream(file, { start: 0, end: size - 1, highWaterMark: 1 << 20 })) yield chunk as Buffer;
}

/**
 * Zips the bundle folder (top folder kept) with sorted entries, fixed dates,
 * normalised permissions (755 for executables and folders, 644 otherwise),
 * symlinks stored as links, and no `._*`/`.DS_Store` junk. Deflate runs on
 * every core: chunks are compressed ahead in the thread pool while the
 * writer takes their results in order, so the bytes never depend on timing.
 */
export async function zipBundle(bundleDir: string, outFile: string, options: ZipOptions = {}): Promise<ZipResult> {
  const { entries, skipped } = await listBundleEntries(bundleDir);
  const sha256 = createHash("sha256");
  const writer = await ZipWriter.create(outFile, [sha256, ...(options.observers ?? [])]);
  const source = workItems(entries, options.level ?? 6, new DeflateSlots());
  const queue: Array<Promise<IteratorResult<WorkItem>>> = [];
  try {
    const refill = () => {
      while (queue.length < AHEAD_ITEMS) {
        const item = source.next();
        item.catch(() => undefined); // awaited in order below; this only stops an early rejection counting as unhandled
        queue.push(item);
      }
    };
    refill();
    for (;;) {
      const next = await queue.shift()!;
      if (next.done) break;
      refill();
      const { entry, chunk, first } = next.value;
      if (entry.kind === "dir") await writer.addDirectory(entry.name, DIR_MODE);
      else if (entry.kind === "symlink") await writer.addSymlink(entry.name, entry.target, LINK_MODE);
      else {
        if (first) await writer.beginFile(entry.name, entry.executable ? EXEC_MODE : FILE_MODE, chunk!.deflated !== undefined);
        await writer.appendChunk(chunk!.raw, chunk!.deflated ? await chunk!.deflated : chunk!.raw);
        if (chunk!.last) await writer.endFile(() => rereadFile(entry.abs, entry.size));
      }
    }
    const { entryCount, sizeBytes } = await writer.finish();
    const symlinks = entries.flatMap((e) => (e.kind === "symlink" ? [{ name: e.name, target: e.target }] : []));
    return { file: outFile, sizeBytes, sha256: sha256.digest("hex"), entryCount, skipped, symlinks };
  } catch (err) {
    await writer.abort();
    await source.return(undefined).catch(() => undefined);
    throw err;
  }
}
