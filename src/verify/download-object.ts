import { createHash } from "node:crypto";
import { open } from "node:fs/promises";
import type { Readable } from "node:stream";
import { hashOffThread } from "../core/hash-pool.js";
import type { ObjectStore, OpenedObject } from "../store/object-store.js";

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

/** 1 MiB buffers that objects read in place are hashed through, reused: thousands of objects make no garbage. */
const SCRATCH_BYTES = 1 << 20;
const scratchBuffers: Buffer[] = [];

/**
 * Hashes an object opened in place (a folder store) on this thread, by
 * positioned reads: a kept object straight into one buffer of its size, any
 * other through a reused scratch buffer. Reads to the end whatever the
 * announced size said: bytes past it are hashed and counted (and then no
 * body is kept).
 */
async function hashInPlace(opened: OpenedObject, keep: boolean): Promise<{ sha256: string; size: number; body?: Buffer }> {
  const hash = createHash("sha256");
  let size = 0;
  let body: Buffer | undefined;
  if (keep) {
    body = Buffer.allocUnsafeSlow(opened.meta.size);
    for (let n = 1; size < body.length && n > 0; size += n) n = await opened.read(body, size, body.length - size, size);
    if (size < body.length) body = body.subarray(0, size);
    hash.update(body);
  }
  const scratch = scratchBuffers.pop() ?? Buffer.allocUnsafeSlow(SCRATCH_BYTES);
  try {
    for (let n = await opened.read(scratch, 0, scratch.length, size); n > 0; n = await opened.read(scratch, 0, scratch.length, size)) {
      hash.update(scratch.subarray(0, n));
      size += n;
      body = undefined;
    }
  } finally {
    if (scratchBuffers.length < 16) scratchBuffers.push(scratch);
  }
  return { sha256: hash.digest("hex"), size, ...(body ? { body } : {}) };
}

/**
 * Reads one object out of the store once and hashes it: a small object (up
 * to `keepUpTo`, or 16 MiB) here, read in place when the store can
 * (`openRead`: no buffer per chunk, so no garbage to collect; SHA-256 with
 * SHA-NI is cheaper than moving the bytes to a worker), else streamed and
 * kept whole when asked; a larger one streamed through a hash worker (with the
 * signature's challenge hash in the same pass when asked), optionally also
 * into `toFile`. Nothing is read twice and memory stays bounded, so large
 * disk images are fine. Undefined when the object does not exist.
 */
export async function downloadObject(store: ObjectStore, key: string, options: DownloadOptions = {}): Promise<Downloaded | undefined> {
  const limit = options.keepUpTo ?? IN_MEMORY_BYTES;
  if (store.openRead && !options.toFile) {
    const opened = await store.openRead(key);
    if (!opened) return undefined;
    let here: Awaited<ReturnType<typeof hashInPlace>> | undefined;
    try {
      // A larger object goes to the hash workers below (every core), as a stream.
      if (opened.meta.size <= limit) here = await hashInPlace(opened, options.keepUpTo !== undefined);
    } finally {
      await opened.close();
    }
    if (here) return tallied({ sizeBytes: here.size, sha256: here.sha256, etag: opened.meta.etag, ...(here.body ? { body: here.body } : {}) }, options.tally);
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

