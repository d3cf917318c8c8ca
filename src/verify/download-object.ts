import { createHash } from "node:crypto";
import { createWriteStream } from "node:fs";
import { Transform, Writable } from "node:stream";
import { pipeline } from "node:stream/promises";
import type { ObjectStore } from "../store/object-store.js";

/** How many objects and bytes a verify run hashed. */
export interface HashTally {
  objects: number;
  bytes: number;
}

export interface Downloaded {
  sizeBytes: number;
  sha256: string;
}

/**
 * Streams one object out of the store, hashing it on the way, into `toFile`
 * (or nowhere). Nothing is held in memory, so large disk images are fine.
 * Returns undefined when the object does not exist.
 */
export async function downloadObject(store: ObjectStore, key: string, toFile?: string, tally?: HashTally): Promise<Downloaded | undefined> {
  const got = await store.getStream(key);
  if (!got) return undefined;
  const hash = createHash("sha256");
  let sizeBytes = 0;
  const meter = new Transform({
    transform(chunk: Buffer, _enc, done) {
      hash.update(chunk);
      sizeBytes += chunk.length;
      done(null, chunk);
    },
  });
  const sink = toFile ? createWriteStream(toFile) : new Writable({ write: (_c, _e, done) => done() });
  await pipeline(got.stream, meter, sink);
  if (tally) {
    tally.objects++;
    tally.bytes += sizeBytes;
  }
  return { sizeBytes, sha256: hash.digest("hex") };
}
