import { createHash } from "node:crypto";
import { open } from "node:fs/promises";
import { PreconditionFailedError } from "../core/errors.js";
import { writeAll } from "../core/write-all.js";
import { catalogHead, entryText, serializeCatalog } from "../domain/catalog.js";
import type { Catalog, ReleaseRecord } from "../domain/record-schema.js";
import type { CatalogView } from "./catalog-entry.js";

/** Bytes gathered before a write. */
const WRITE_BATCH = 256 << 10;

type Write = (bytes: Buffer, now?: boolean) => Promise<void>;

/**
 * Creates `outFile` (create-only: a file handed over to a store may be that
 * object now; it must never be rewritten in place) and writes into it what
 * `fill` writes, gathering small pieces into larger writes (`now`: write at
 * once, for a chunk its reader reuses) and hashing on the way out, so the
 * file is never read back. Returns its size and SHA-256.
 */
async function writeCatalogFile(outFile: string, fill: (write: Write) => Promise<void>): Promise<{ sizeBytes: number; sha256: string }> {
  const out = await open(outFile, "wx");
  const hash = createHash("sha256");
  let sizeBytes = 0;
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  const flush = async () => {
    const parts = pending;
    pending = [];
    pendingBytes = 0;
    await writeAll(out, parts);
  };
  try {
    await fill(async (bytes, now = false) => {
      hash.update(bytes);
      sizeBytes += bytes.length;
      pending.push(bytes);
      pendingBytes += bytes.length;
      if (now || pendingBytes >= WRITE_BATCH) await flush();
    });
    await flush();
  } finally {
    await out.close();
  }
  return { sizeBytes, sha256: hash.digest("hex") };
}

/**
 * Writes into `outFile` the catalog `chunks` (the bytes `view` was read
 * from, whose first entry starts at `view.firstOffset`) with `record` in
 * front as the newest entry: the head with the new count, the record, then
 * the old bytes from the first entry on, copied as they are. So a publish
 * into a catalog of thousands of releases costs one pass over the file and
 * the memory of one chunk (with `reusedChunks`, the reader reuses one buffer
 * for every chunk: each is written before the next is read), and the output
 * is laid out as serializeCatalog lays out a catalog.
 */
export async function writeWithNewest(
  source: string, chunks: AsyncIterable<Buffer>, view: CatalogView & { firstOffset: number }, record: ReleaseRecord, outFile: string, options: { reusedChunks?: boolean } = {},
): Promise<{ firstOffset: number; sizeBytes: number; sha256: string }> {
  const head = catalogHead(view.pluginId, view.count + 1);
  const written = await writeCatalogFile(outFile, async (write) => {
    await write(Buffer.from(`${head}${entryText(record)},\n    `));
    let at = 0;
    for await (const chunk of chunks) {
      const from = Math.max(0, view.firstOffset - at);
      at += chunk.length;
      if (from < chunk.length) await write(from === 0 ? chunk : chunk.subarray(from), options.reusedChunks === true);
    }
    // Shorter than the view says: not the bytes the view was read from (replaced in between). Lose this round, re-read.
    if (at <= view.firstOffset) throw new PreconditionFailedError(source, "if-match");
  });
  return { firstOffset: Buffer.byteLength(head), ...written };
}

/**
 * Writes a catalog as buildCatalog makes it (`pluginId`, `count`, `versions`)
 * into `outFile`, byte for byte as serializeCatalog lays it out, one entry at
 * a time: a catalog of 10,000 releases is 20 MB of text, never held whole.
 * `firstOffset`: where its first entry starts (undefined: no entries).
 */
export async function writeCatalog(catalog: Catalog, outFile: string): Promise<{ firstOffset: number | undefined; sizeBytes: number; sha256: string }> {
  const { pluginId, count, versions } = catalog;
  if (versions.length === 0) return { firstOffset: undefined, ...(await writeCatalogFile(outFile, (write) => write(Buffer.from(serializeCatalog({ pluginId, count, versions }))))) };
  const head = catalogHead(pluginId, count);
  const written = await writeCatalogFile(outFile, async (write) => {
    await write(Buffer.from(head));
    for (const [i, record] of versions.entries()) await write(Buffer.from(i === 0 ? entryText(record) : `,\n    ${entryText(record)}`));
    await write(Buffer.from("\n  ]\n}\n"));
  });
  return { firstOffset: Buffer.byteLength(head), ...written };
}
