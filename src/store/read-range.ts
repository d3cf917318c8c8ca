import type { ObjectStore } from "./object-store.js";

/** Bytes `start`..`end` (inclusive) of an object, whole in memory; undefined when the object is missing. */
export async function readRange(store: ObjectStore, key: string, start: number, end: number): Promise<Buffer | undefined> {
  const got = await store.getStream(key, { start, end });
  if (!got) return undefined;
  const parts: Buffer[] = [];
  try {
    for await (const chunk of got.stream) parts.push(chunk as Buffer);
  } finally {
    got.stream.destroy();
  }
  return Buffer.concat(parts);
}
