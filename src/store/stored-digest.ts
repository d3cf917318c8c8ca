import { digestStream } from "../core/file-digest.js";
import type { ObjectStore } from "./object-store.js";

/** SHA-256 of an object as stored, streamed (used only when a re-run finds an existing object). */
export async function storedDigest(store: ObjectStore, key: string): Promise<{ sha256: string; sizeBytes: number } | undefined> {
  const got = await store.getStream(key);
  if (!got) return undefined;
  return digestStream(got.stream);
}
