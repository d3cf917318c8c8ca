import { createHash } from "node:crypto";
import { once } from "node:events";
import { createWriteStream } from "node:fs";
import { PreconditionFailedError } from "../core/errors.js";
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
 * the cost is one pass over the file and the memory one entry. The output is
 * laid out as serializeCatalog lays out a catalog. Returns whether anything
 * changed, and the size and SHA-256 of what it wrote (hashed on the way out,
 * so the file is not read back: with 10,000 releases it is over 20 MB).
 */
export async function writeMergedCatalog(source: string, chunks: AsyncIterable<Buffer>, view: CatalogView, record: ReleaseRecord, outFile: string): Promise<{ changed: boolean; firstOffset: number; sizeBytes: number; sha256: string }> {
  const { insertAt, replaces } = placement(view.entries, record);
  const fresh = recordText(record);
  let changed = replaces === -1 || (insertAt !== replaces && insertAt !== replaces + 1);
  const count = view.entries.length + (replaces === -1 ? 1 : 0);
  // Create-only: a file handed over to a store may be that object now; it must never be rewritten in place.
  const out = createWriteStream(outFile, { flags: "wx" });
  const failed = new Promise<never>((_, reject) => out.once("error", reject));
  failed.catch(() => undefined);
  let written = 0;
  const hash = createHash("sha256");
  let sizeBytes = 0;
  const write = async (text: string | Buffer) => {
    const bytes = typeof text === "string" ? Buffer.from(text) : text;
    hash.update(bytes);
    sizeBytes += bytes.length;
    if (!out.write(bytes)) await Promise.race([once(out, "drain"), failed]);
  };
  const element = async (text: string | Buffer) => {
    await write(written++ === 0 ? "    " : ",\n    ");
    await write(text);
  };
  const header = `{\n  "pluginId": ${JSON.stringify(view.pluginId)},\n  "count": ${count},\n  "versions": [${count === 0 ? "" : "\n"}`;
  await write(header);
  if (insertAt === 0 && replaces === -1 && view.firstOffset !== undefined) {
    // The usual publish: the newest release goes first. Copy the rest as it is, from the first entry on.
    await element(fresh);
    await write(",\n    ");
    let at = 0;
    for await (const chunk of chunks) {
      const from = Math.max(0, view.firstOffset - at);
      at += chunk.length;
      if (from < chunk.length) await write(from === 0 ? chunk : chunk.subarray(from));
    }
    if (at <= view.firstOffset) throw new PreconditionFailedError(source, "if-match");
  } else {
    let seen = 0;
    await scanCatalog(source, chunks, async (raw, index) => {
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
  out.end();
  await Promise.race([once(out, "finish"), failed]);
  return { changed, firstOffset: Buffer.byteLength(header) + 4, sizeBytes, sha256: hash.digest("hex") };
}
