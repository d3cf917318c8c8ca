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
    await target.put(toKey, { file, handOver: true }, options);
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

/** Whether two byte streams hold the same bytes (read in step, stops at the first difference). */
async function sameStreams(a: AsyncIterable<Buffer>, b: AsyncIterable<Buffer>): Promise<boolean> {
  const ia = a[Symbol.asyncIterator]();
  const ib = b[Symbol.asyncIterator]();
  let ca: Buffer = Buffer.alloc(0);
  let cb: Buffer = Buffer.alloc(0);
  for (;;) {
    if (ca.length === 0) {
      const n = await ia.next();
      ca = n.done ? Buffer.alloc(0) : n.value;
      if (n.done && cb.length === 0) return (await ib.next()).done === true;
      if (n.done) return false;
    }
    if (cb.length === 0) {
      const n = await ib.next();
      if (n.done) return false;
      cb = n.value;
    }
    const len = Math.min(ca.length, cb.length);
    if (!ca.subarray(0, len).equals(cb.subarray(0, len))) return false;
    ca = ca.subarray(len);
    cb = cb.subarray(len);
  }
}

/**
 * Copies an object only when the target differs (same size and same bytes
 * are left alone, keeping its ETag); streams both, so a large catalog is
 * never held in memory. Returns whether it copied.
 */
export async function copyIfChanged(source: ObjectStore, target: ObjectStore, fromKey: string, toKey: string, options: PutOptions): Promise<boolean> {
  const [from, to] = await Promise.all([source.head(fromKey), target.head(toKey)]);
  if (!from) return false;
  if (to && to.size === from.size) {
    const [a, b] = await Promise.all([source.getStream(fromKey), target.getStream(toKey)]);
    try {
      if (a && b && (await sameStreams(a.stream as AsyncIterable<Buffer>, b.stream as AsyncIterable<Buffer>))) return false;
    } finally {
      a?.stream.destroy();
      b?.stream.destroy();
    }
  }
  return transferObject(source, target, fromKey, toKey, options);
}
