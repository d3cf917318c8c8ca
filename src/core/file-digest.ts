import { createHash } from "node:crypto";
import { createReadStream } from "node:fs";
import type { Readable } from "node:stream";

/** Hex SHA-256 and byte count of a stream, read once. */
export async function digestStream(stream: Readable): Promise<{ sha256: string; sizeBytes: number }> {
  const hash = createHash("sha256");
  let sizeBytes = 0;
  for await (const chunk of stream) {
    hash.update(chunk as Buffer);
    sizeBytes += (chunk as Buffer).length;
  }
  return { sha256: hash.digest("hex"), sizeBytes };
}

/** `signal` stops the read (the promise then rejects). */
export function digestFile(file: string, signal?: AbortSignal): Promise<{ sha256: string; sizeBytes: number }> {
  return digestStream(createReadStream(file, { highWaterMark: 1 << 20, ...(signal ? { signal } : {}) }));
}
