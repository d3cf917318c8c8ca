import { createHash } from "node:crypto";
import { open } from "node:fs/promises";
import { PreconditionFailedError } from "../core/errors.js";
import { writeAll } from "../core/write-all.js";
import { catalogHead, entryText } from "../domain/catalog.js";
import type { ReleaseRecord } from "../domain/record-schema.js";
import type { CatalogView } from "./catalog-entry.js";

/** Bytes gathered before a write. */
const WRITE_BATCH = 256 << 10;

/**
 * Writes into `outFile` the catalog `chunks` (the bytes `view` was read
 * from, whose first entry starts at `view.firstOffset`) with `record` in
 * front as the newest entry: the head with the new count, the record, then
 * the old bytes from the first entry on, copied as they are. So a publish
 * into a catalog of thousands of releases costs one pass over the file and
 * the memory of one chunk (with `reusedChunks`, the reader reuses one buffer
 * for every chunk: each is written before the next is read), and the output
 * is laid out as serializeCatalog lays out a catalog. Returns the size and
 * SHA-256 of what it wrote (hashed on the way out: the file is not read back).
 */
export async function writeWithNewest(
  source: string, chunks: AsyncIterable<Buffer>, view: CatalogView & { firstOffset: number }, record: ReleaseRecord, outFile: string, options: { reusedChunks?: boolean } = {},
): Promise<{ firstOffset: number; sizeBytes: number; sha256: string }> {
  // Create-only: a file handed over to a store may be that object now; it must never be rewritten in place.
  const out = await open(outFile, "wx");
  const hash = createHash("sha256");
  let sizeBytes = 0;
  // Small pieces are gathered and written together; a chunk the reader reuses is written before the next one is read.
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  const flush = async () => {
    const parts = pending;
    pending = [];
    pendingBytes = 0;
    await writeAll(out, parts);
  };
  const write = async (bytes: Buffer, now = false) => {
    hash.update(bytes);
    sizeBytes += bytes.length;
    pending.push(bytes);
    pendingBytes += bytes.length;
    if (now || pendingBytes >= WRITE_BATCH) await flush();
  };
  const head = catalogHead(view.pluginId, view.count + 1);
  try {
    await write(Buffer.from(`${head}${entryText(record)},\n    `));
    let at = 0;
    for await (const chunk of chunks) {
      const from = Math.max(0, view.firstOffset - at);
      at += chunk.length;
      if (from < chunk.length) await write(from === 0 ? chunk : chunk.subarray(from), options.reusedChunks === true);
    }
    // Shorter than the view says: not the bytes the view was read from (replaced in between). Lose this round, re-read.
    if (at <= view.firstOffset) throw new PreconditionFailedError(source, "if-match");
    await flush();
  } finally {
    await out.close();
  }
  return { firstOffset: Buffer.byteLength(head), sizeBytes, sha256: hash.digest("hex") };
}
