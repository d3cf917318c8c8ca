import { createHash } from "node:crypto";
import { open } from "node:fs/promises";
import type { Readable } from "node:stream";
import { hashFileOffThread, hashOffThread, type Ed25519Check, type FileDigests } from "../core/hash-pool.js";
import { challengePrefix, verifyEd25519Buffered, verifyEd25519Challenge } from "../sparkle/ed25519-stream.js";
import type { ObjectStore } from "../store/object-store.js";
import type { ReadMemo } from "./read-memo.js";

/** How many objects and bytes a verify run checked against what a record pins. */
export interface HashTally {
  objects: number;
  bytes: number;
  /** Of those, the objects that were the very file of one already hashed (a folder store's hard-link copy), not read again. */
  sameFile?: number;
  /** What this run read, for `DownloadOptions.sameAs`. */
  memo?: ReadMemo;
}

export interface Downloaded {
  sizeBytes: number;
  sha256: string;
  etag: string;
  /** The whole object, when it was small enough to read into memory (`keepUpTo`). */
  body?: Buffer;
  /** SHA-512 of R ‖ A ‖ the object for `ed25519`, when the object was not kept. */
  challenge?: Buffer;
  /** Whether `ed25519` verifies over the object, when it was checked in the pass that read it. */
  signatureValid?: boolean;
}

export interface DownloadOptions {
  /** Also write the object here (for checks that need it as a file, e.g. applying a delta). */
  toFile?: string;
  tally?: HashTally;
  /** Objects up to this size are read into memory and returned as `body` (hashed on the thread pool). */
  keepUpTo?: number;
  /** An Ed25519 signature of the object, checked in the same read (see {@link signatureHolds}). */
  ed25519?: Ed25519Check;
  /**
   * Keys this object is a copy of (itself included, for a second look at
   * it): when the store says it is the very file one of them was read from
   * in this run (`tally.memo`), unchanged, their digests stand for it and it
   * is not read again. Not with `keepUpTo` or `ed25519`, which need the bytes.
   */
  sameAs?: readonly string[];
}

/** Objects up to this size are kept whole when asked (`keepUpTo`); larger ones are only hashed, on a worker, so big disk images hash on every core. */
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
 * bytes) and keeps its chunks while they stay within `keep` (else, with a
 * challenge prefix, hashes that too); past `limit` it hands over what it
 * read and the rest, to go on elsewhere.
 */
async function hashHere(stream: Readable, limit: number, keep: boolean, prefix: Buffer | undefined): Promise<{ sha256: string; size: number; body?: Buffer; challenge?: Buffer } | { rest: AsyncIterable<Uint8Array> }> {
  const hash = createHash("sha256");
  const challenge = prefix && !keep ? createHash("sha512").update(prefix) : undefined;
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
    challenge?.update(next.value);
    if (!keep) parts.length = 0;
  }
  return {
    sha256: hash.digest("hex"), size,
    ...(keep ? { body: parts.length === 1 ? parts[0]! : Buffer.concat(parts, size) } : {}), ...(challenge ? { challenge: challenge.digest() } : {}),
  };
}

/**
 * Reads one object out of the store once and hashes it. Where the store can
 * (`openRead`: the folder store) a hash worker reads it in place by pread
 * into one buffer of its size when it is kept (up to `keepUpTo`), else
 * through a reused one, with the signature checked over the kept bytes or
 * its challenge hash computed in the same pass: no buffer per chunk, no
 * copy, and the main thread neither reads nor hashes. Else it is streamed:
 * hashed here and kept whole when small, through a hash worker when larger,
 * optionally also into `toFile`. Nothing is read twice, and a copy that is
 * the very file of one already read (`sameAs`) is not read at all. Memory
 * stays bounded, so large disk images are fine. Undefined when the object
 * does not exist.
 */
export async function downloadObject(store: ObjectStore, key: string, options: DownloadOptions = {}): Promise<Downloaded | undefined> {
  const limit = options.keepUpTo ?? IN_MEMORY_BYTES;
  const prefix = options.ed25519 ? challengePrefix(options.ed25519.publicKey, options.ed25519.signature) : undefined;
  if (store.openRead && !options.toFile) {
    const opened = await store.openRead(key);
    if (!opened) return undefined;
    const memo = options.tally?.memo;
    let here: FileDigests;
    try {
      if (opened.sameFile !== undefined && options.sameAs && options.keepUpTo === undefined && !options.ed25519) {
        const known = memo?.recall(options.sameAs, opened.sameFile);
        if (known) return tallied({ sizeBytes: known.sizeBytes, sha256: known.sha256, etag: opened.meta.etag }, options.tally, true);
      }
      // Kept when asked and small enough; any size is read in place, with the signature checked or its challenge hashed in that pass.
      here = await hashFileOffThread(opened.fd, opened.meta.size, options.keepUpTo !== undefined && opened.meta.size <= limit, options.ed25519);
    } finally {
      await opened.close();
    }
    if (opened.sameFile !== undefined) memo?.remember(key, { sameFile: opened.sameFile, sizeBytes: here.sizeBytes, sha256: here.sha256 });
    return tallied({
      sizeBytes: here.sizeBytes, sha256: here.sha256, etag: opened.meta.etag,
      ...(here.body ? { body: here.body } : {}), ...(here.sha512 ? { challenge: here.sha512 } : {}), ...(here.signatureValid !== undefined ? { signatureValid: here.signatureValid } : {}),
    }, options.tally);
  }
  const got = await store.getStream(key);
  if (!got) return undefined;
  let result: Downloaded | undefined;
  try {
    let source: AsyncIterable<Uint8Array> | undefined = got.stream;
    if (options.toFile) source = writtenThrough(got.stream, options.toFile);
    else if (got.meta.size <= limit) {
      // The size is the store's word: a body larger than announced goes on to the worker from where it got.
      const here = await hashHere(got.stream, limit, options.keepUpTo !== undefined, prefix);
      if ("rest" in here) source = here.rest;
      else {
        source = undefined;
        result = { sizeBytes: here.size, sha256: here.sha256, etag: got.meta.etag, ...(here.body ? { body: here.body } : {}), ...(here.challenge ? { challenge: here.challenge } : {}) };
      }
    }
    if (source) {
      const digests = await hashOffThread(source, { transfer: !options.toFile, ...(prefix ? { sha512Prefix: prefix } : {}) });
      result = { sizeBytes: digests.sizeBytes, sha256: digests.sha256, etag: got.meta.etag, ...(digests.sha512 ? { challenge: digests.sha512 } : {}) };
    }
  } finally {
    got.stream.destroy();
  }
  if (!result) throw new Error(`pipeline bug: ${key} was read but not hashed`);
  return tallied(result, options.tally);
}

/**
 * Whether the signature asked for in `ed25519` verifies over the object as
 * it was read: the verdict of that pass, else checked over the kept bytes (by
 * OpenSSL on libuv's thread pool), else from the challenge hash; undefined
 * when the read gave none of them (a streamed object with other bytes kept).
 */
export async function signatureHolds(got: Downloaded, check: Ed25519Check): Promise<boolean | undefined> {
  if (got.signatureValid !== undefined) return got.signatureValid;
  if (got.body) return verifyEd25519Buffered(check.publicKey, check.signature, got.body);
  if (got.challenge) return verifyEd25519Challenge(check.publicKey, check.signature, got.challenge);
  return undefined;
}

function tallied(result: Downloaded, tally: HashTally | undefined, sameFile = false): Downloaded {
  if (tally) {
    tally.objects++;
    tally.bytes += result.sizeBytes;
    if (sameFile) tally.sameFile = (tally.sameFile ?? 0) + 1;
  }
  return result;
}
