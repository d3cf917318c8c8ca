import { createHash } from "node:crypto";
import { open } from "node:fs/promises";
import type { Readable } from "node:stream";
import { hashFileOffThread, hashOffThread, type FileDigests } from "../core/hash-pool.js";
import type { ObjectStore } from "../store/object-store.js";

/** How many objects and bytes a verify run hashed. */
export interface HashTally {
  objects: number;
  bytes: number;
}

export interface Downloaded {
  sizeBytes: number;
  sha256: string;
  etag: string;
  /** The whole object, when it was small enough to read into memory (`keepUpTo`). */
  body?: Buffer;
  /** SHA-512 of `challengePrefix` ‖ the object, when a prefix was asked for and the object was streamed. */
  challenge?: Buffer;
}

export interface DownloadOptions {
  /** Also write the object here (for checks that need it as a file, e.g. applying a delta). */
  toFile?: string;
  tally?: HashTally;
  /** Objects up to this size are read into memory and returned as `body` (hashed on the thread pool). */
  keepUpTo?: number;
  /** R ‖ A of an Ed25519 signature: a streamed object's challenge hash is computed in the same read. */
  challengePrefix?: Uint8Array;
}

/** Objects up to this size are hashed here (and kept whole when asked); larger ones stream through a hash worker, so big disk images hash on every core. */
export const IN_MEMORY_BYTES = 16 << 20;

async function* writtenThrough(stream: Readable, file: string): AsyncGenerator<Uint8Array> {
  const out = await open(file, "wx");
  try {
    for await (const chunk of stream) {
      const bytes = chunk as Buffer;
      let at = 0;
      while (at < bytes.length) at += (await out.write(bytes, at, bytes.length - at)).bytesWritten;
      yield bytes;
    }
  } finally {
    await out.close();
  }
}

/**
 * Hashes the stream on this thread (native SHA-256, cheap next to moving the
 * bytes) and keeps its chunks while they stay within `keep`; past `limit`
 * it hands over what it read and the rest, to go on elsewhere.
 */
async function hashHere(stream: Readable, limit: number, keep: boolean): Promise<{ sha256: string; size: number; body?: Buffer } | { rest: AsyncIterable<Uint8Array> }> {
  const hash = createHash("sha256");
  const parts: Buffer[] = [];
  let size = 0;
  const it = (stream as AsyncIterable<Buffer>)[Symbol.asyncIterator]();
  for (let next = await it.next(); !next.done; next = await it.next()) {
    parts.push(next.value);
    size += next.value.length;
    if (size > limit) {
      return {
        rest: (async function* () {
          yield* parts;
          for (let more = await it.next(); !more.done; more = await it.next()) yield more.value;
        })(),
      };
    }
    hash.update(next.value);
    if (!keep) parts.length = 0;
  }
  return { sha256: hash.digest("hex"), size, ...(keep ? { body: parts.length === 1 ? parts[0]! : Buffer.concat(parts, size) } : {}) };
}

/**
 * Reads one object out of the store once and hashes it: a small object (up
 * to `keepUpTo`, or 16 MiB) read in place by a hash worker when the store
 * can (`openRead`: pread of the descriptor into a reused buffer, or one of
 * the object's size that is handed back when kept; no buffer per chunk, so
 * no garbage, and the main thread neither reads nor hashes), else streamed
 * and kept whole when asked; a larger one streamed through a hash worker (with the
 * signature's challenge hash in the same pass when asked), optionally also
 * into `toFile`. Nothing is read twice and memory stays bounded, so large
 * disk images are fine. Undefined when the object does not exist.
 */
export async function downloadObject(store: ObjectStore, key: string, options: DownloadOptions = {}): Promise<Downloaded | undefined> {
  const limit = options.keepUpTo ?? IN_MEMORY_BYTES;
  if (store.openRead && !options.toFile) {
    const opened = await store.openRead(key);
    if (!opened) return undefined;
    let here: FileDigests | undefined;
    try {
      // A larger object is streamed below (with the signature's challenge hash when asked).
      if (opened.meta.size <= limit) here = await hashFileOffThread(opened.fd, opened.meta.size, options.keepUpTo !== undefined);
    } finally {
      await opened.close();
    }
    if (here) return tallied({ ...here, etag: opened.meta.etag }, options.tally);
  }
  const got = await store.getStream(key);
  if (!got) return undefined;
  let result: Downloaded | undefined;
  try {
    let source: AsyncIterable<Uint8Array> | undefined = got.stream;
    if (options.toFile) source = writtenThrough(got.stream, options.toFile);
    else if (got.meta.size <= limit) {
      // The size is the store's word: a body larger than announced goes on to the worker from where it got.
      const here = await hashHere(got.stream, limit, options.keepUpTo !== undefined);
      if ("rest" in here) source = here.rest;
      else {
        source = undefined;
        result = { sizeBytes: here.size, sha256: here.sha256, etag: got.meta.etag, ...(here.body ? { body: here.body } : {}) };
      }
    }
    if (source) {
      const digests = await hashOffThread(source, { transfer: !options.toFile, ...(options.challengePrefix ? { sha512Prefix: options.challengePrefix } : {}) });
      result = { sizeBytes: digests.sizeBytes, sha256: digests.sha256, etag: got.meta.etag, ...(digests.sha512 ? { challenge: digests.sha512 } : {}) };
    }
  } finally {
    got.stream.destroy();
  }
  if (!result) throw new Error(`pipeline bug: ${key} was read but not hashed`);
  return tallied(result, options.tally);
}

function tallied(result: Downloaded, tally: HashTally | undefined): Downloaded {
  if (tally) {
    tally.objects++;
    tally.bytes += result.sizeBytes;
  }
  return result;
}

