import { createReadStream } from "node:fs";
import type { ContentSource } from "../domain/release-plan.js";
import type { ObjectStore } from "../store/object-store.js";

async function* once(bytes: Buffer): AsyncIterable<Buffer> {
  yield bytes;
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
 * Whether `target` already holds exactly these bytes at `key` (a write that
 * would change nothing is planned as skipped, keeping ETags and
 * Last-Modified stable). Files are compared as streams, never held in memory.
 */
export async function targetHolds(target: ObjectStore, key: string, source: ContentSource, sizeBytes: number): Promise<boolean> {
  if (source.kind === "stamped") return false;
  const head = await target.head(key);
  if (!head || head.size !== sizeBytes) return false;
  const got = await target.getStream(key);
  if (!got) return false;
  const mine = source.kind === "file" ? createReadStream(source.file) : undefined;
  try {
    return await sameStreams(got.stream as AsyncIterable<Buffer>, mine ?? once(source.kind === "bytes" ? source.bytes : Buffer.alloc(0)));
  } finally {
    got.stream.destroy();
    mine?.destroy();
  }
}

/** Whether `to` in `target` holds the same bytes as `from` in `source` (both streamed). */
export async function sameObjects(source: ObjectStore, target: ObjectStore, from: string, to: string): Promise<boolean> {
  const [a, b] = await Promise.all([source.head(from), target.head(to)]);
  if (!a || !b || a.size !== b.size) return false;
  const [sa, sb] = await Promise.all([source.getStream(from), target.getStream(to)]);
  try {
    return Boolean(sa && sb && (await sameStreams(sa.stream as AsyncIterable<Buffer>, sb.stream as AsyncIterable<Buffer>)));
  } finally {
    sa?.stream.destroy();
    sb?.stream.destroy();
  }
}
