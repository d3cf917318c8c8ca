import { createWriteStream } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { pipeline } from "node:stream/promises";
import type { ObjectStore, PutOptions } from "../store/object-store.js";

/**
 * Copies one object: a server-side copy inside one store, else streamed
 * through a temp file (artifacts are never held in memory). Returns false
 * when the source is gone.
 */
export async function transferObject(source: ObjectStore, target: ObjectStore, fromKey: string, toKey: string, options: PutOptions): Promise<boolean> {
  if (source === target) {
    if (!(await source.head(fromKey))) return false;
    await target.copy(fromKey, toKey, options);
    return true;
  }
  const got = await source.getStream(fromKey);
  if (!got) return false;
  const dir = await mkdtemp(path.join(os.tmpdir(), "relcast-transfer-"));
  try {
    const file = path.join(dir, "object");
    await pipeline(got.stream, createWriteStream(file));
    await target.put(toKey, { file }, options);
    return true;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** Writes text only when it differs from what is there (keeps ETags and Last-Modified stable). */
export async function putIfChanged(store: ObjectStore, key: string, body: Buffer | string, options: PutOptions): Promise<boolean> {
  const current = await store.get(key);
  if (current && current.body.equals(Buffer.from(body))) return false;
  await store.put(key, body, options);
  return true;
}
