import { createHash } from "node:crypto";
import { open } from "node:fs/promises";
import { PreconditionFailedError } from "../core/errors.js";
import { writeAll } from "../core/write-all.js";
import type { ReleaseRecord } from "../domain/record-schema.js";
import { scanCatalog } from "./catalog-scan.js";
import type { CatalogView } from "./catalog-entry.js";
import { placement } from "./catalog-view.js";

/** A record as serializeCatalog writes it inside `versions` (4 spaces in). */
export function recordText(record: ReleaseRecord): string {
  return JSON.stringify(record, null, 2).replace(/\n/g, "\n    ");
}

/**
 * Streams the catalog `chunks` (the bytes `view` was read from) into `outFile`
 * with `record` merged in: inserted at its place newest first, replacing the
 * entry of the same version. The other entries are copied byte for byte, so
 * the cost is one pass over the file and the memory one entry (with
 * `reusedChunks`, the reader reuses one buffer for every chunk: each is
 * written before the next is read). The output is
 * laid out as serializeCatalog lays out a catalog. Returns whether anything
 * changed, and the size and SHA-256 of what it wrote (hashed on the way out,
 * so the file is not read back: with 10,000 releases it is over 20 MB).
 */
export async function writeMergedCatalog(
  source: string, chunks: AsyncIterable<Buffer>, view: CatalogView, record: ReleaseRecord, outFile: string, options: { reusedChunks?: boolean } = {},
): Promise<{ changed: boolean; firstOffset: number; sizeBytes: number; sha256: string }> {
  const { insertAt, replaces } = placement(view.entries, record);
  const fresh = recordText(record);
  let changed = replaces === -1 || (insertAt !== replaces && insertAt !== replaces + 1);
  const count = view.entries.length + (replaces === -1 ? 1 : 0);
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
  const write = async (text: string | Buffer, now = false) => {
    const bytes = typeof text === "string" ? Buffer.from(text) : text;
    hash.update(bytes);
    sizeBytes += bytes.length;
    pending.push(bytes);
    pendingBytes += bytes.length;
    if (now || pendingBytes >= WRITE_BATCH) await flush();
  };
  let written = 0;
  const element = async (text: string | Buffer) => {
    await write(written++ === 0 ? "    " : ",\n    ");
    await write(text);
  };
  const header = `{\n  "pluginId": ${JSON.stringify(view.pluginId)},\n  "count": ${count},\n  "versions": [${count === 0 ? "" : "\n"}`;
  try {
    await write(header);
    if (insertAt === 0 && replaces === -1 && view.firstOffset !== undefined) {
      // The usual publish: the newest release goes first. Copy the rest as it is, from the first entry on.
      await element(fresh);
      await write(",\n    ");
      let at = 0;
      for await (const chunk of chunks) {
        const from = Math.max(0, view.firstOffset - at);
        at += chunk.length;
        if (from < chunk.length) await write(from === 0 ? chunk : chunk.subarray(from), options.reusedChunks === true);
      }
      if (at <= view.firstOffset) throw new PreconditionFailedError(source, "if-match");
    } else {
      let seen = 0;
      // The scanner keeps pieces of earlier chunks: a reader's reused buffer is copied first.
      await scanCatalog(source, options.reusedChunks ? copied(chunks) : chunks, async (raw, index) => {
        seen++;
        if (index === insertAt) await element(fresh);
        if (index === replaces) {
          if (!changed && raw.toString("utf8") !== fresh) changed = true;
          return;
        }
        await element(raw);
      });
      // The bytes are not the ones the view was read from (replaced in between): lose this round, re-read.
      if (seen !== view.entries.length) throw new PreconditionFailedError(source, "if-match");
      if (insertAt >= view.entries.length) await element(fresh);
      await write(count === 0 ? "]\n}\n" : "\n  ]\n}\n");
    }
    await flush();
  } finally {
    await out.close();
  }
  return { changed, firstOffset: Buffer.byteLength(header) + 4, sizeBytes, sha256: hash.digest("hex") };
}

/** Bytes gathered before a write. */
const WRITE_BATCH = 256 << 10;

async function* copied(chunks: AsyncIterable<Buffer>): AsyncIterable<Buffer> {
  for await (const chunk of chunks) yield Buffer.from(chunk);
}
