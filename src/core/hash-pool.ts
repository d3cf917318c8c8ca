import { createHash, type Hash } from "node:crypto";
import { readSync } from "node:fs";
import os from "node:os";
import { Worker } from "node:worker_threads";
import { WORKER_SOURCE } from "./hash-worker-source.js";

/**
 * Hashes streams on worker threads, so `verify` hashes on every core while
 * the main thread only moves bytes. One stream's chunks all go to one worker
 * (a hash is sequential); different streams spread over the workers.
 *
 * The worker's code is hash-worker-source.ts.
 */

/** Bytes of one stream posted to its worker and not yet hashed; beyond this the stream waits. */
const IN_FLIGHT_BYTES = 8 << 20;

export interface HashOptions {
  /** Also a SHA-512 of this prefix ‖ the bytes (e.g. R ‖ A of an Ed25519 signature: its challenge hash). */
  sha512Prefix?: Uint8Array;
  /** The caller is done with each chunk once it is yielded: its memory may move to the worker (no copy). */
  transfer?: boolean;
}

export interface StreamDigests {
  sizeBytes: number;
  sha256: string;
  /** SHA-512 of `sha512Prefix` ‖ the bytes, when a prefix was given (an Ed25519 challenge hash). */
  sha512?: Buffer;
}

type DoneMessage = { id: number; op: "done"; sha256: string; sha512?: Uint8Array; size?: number; body?: ArrayBuffer; bodyLength?: number; signatureValid?: boolean };
type FailedMessage = { id: number; op: "failed"; message: string };

/** What hashing a file by its descriptor gives: its size, SHA-256 and, when kept, its bytes. */
export interface FileDigests {
  sizeBytes: number;
  sha256: string;
  body?: Buffer;
  /** With `ed25519`, when it was checked over the whole file held in a worker: whether it verifies. */
  signatureValid?: boolean;
  /** With `ed25519`, when it was not checked here and the bytes are not returned: its challenge hash, SHA-512(R ‖ A ‖ bytes). */
  sha512?: Buffer;
}

/** A raw Ed25519 public key (32 bytes) and a signature (64 bytes) to check over a file's bytes in the pass that hashes them. */
export interface Ed25519Check {
  publicKey: Uint8Array;
  signature: Uint8Array;
}

/** A file with a signature to check is held whole in a worker (its own buffer, reused) up to this size; a larger one gets its challenge hash. */
export const SIGNED_IN_MEMORY_BYTES = 16 << 20;

type AckMessage = { id: number; op: "ack"; length: number };

interface Job {
  onAck(length: number): void;
  onDone(result: DoneMessage | Error): void;
}

class HashPool {
  private readonly workers: Array<{ worker: Worker; streams: number }> = [];
  private readonly jobs = new Map<number, Job>();
  /** The worker each running stream was given. */
  private readonly owner = new Map<number, Worker>();
  private nextId = 1;

  constructor(private readonly size: number) {}

  private pick(): { worker: Worker; streams: number } {
    const idlest = this.workers.reduce<{ worker: Worker; streams: number } | undefined>((a, b) => (a === undefined || b.streams < a.streams ? b : a), undefined);
    // A new worker only when every one there is busy, and then it takes this stream: a worker made and left without a stream was a process that never exited.
    if (idlest !== undefined && (idlest.streams === 0 || this.workers.length >= this.size)) return idlest;
    const worker = new Worker(WORKER_SOURCE, { eval: true });
    worker.on("message", (m: AckMessage | DoneMessage | FailedMessage) => {
      const job = this.jobs.get(m.id);
      if (!job) return;
      if (m.op === "ack") job.onAck(m.length);
      else {
        this.jobs.delete(m.id);
        job.onDone(m.op === "failed" ? new Error(m.message) : m);
      }
    });
    // A worker that dies fails the streams it was hashing (and is replaced for later ones).
    worker.on("error", (err) => this.fail(worker, err));
    worker.on("exit", (code) => this.fail(worker, new Error(`hash worker exited with code ${code}`)));
    // After the listeners: adding a "message" listener refs a worker again, so an unref before it does not hold
    // (an idle worker then kept the process alive: `relcast verify` finished its work and never exited).
    worker.unref();
    const slot = { worker, streams: 0 };
    this.workers.push(slot);
    return slot;
  }

  private fail(worker: Worker, err: Error): void {
    const at = this.workers.findIndex((w) => w.worker === worker);
    if (at >= 0) this.workers.splice(at, 1);
    for (const [id, w] of this.owner) {
      if (w !== worker) continue;
      this.owner.delete(id);
      this.jobs.get(id)?.onDone(err);
      this.jobs.delete(id);
    }
  }

  /** Hashes every chunk of `source` in order; resolves once the last one is hashed. */
  async hash(source: AsyncIterable<Uint8Array>, options: HashOptions): Promise<StreamDigests> {
    const slot = this.pick();
    const id = this.nextId++;
    slot.streams++;
    let inFlight = 0;
    let sizeBytes = 0;
    let failed: Error | undefined;
    let wake: (() => void) | undefined;
    let finished: ((m: DoneMessage) => void) | undefined;
    const done = new Promise<DoneMessage>((resolve) => (finished = resolve));
    this.jobs.set(id, {
      onAck: (length) => {
        inFlight -= length;
        wake?.();
      },
      onDone: (m) => {
        if (m instanceof Error) failed = m;
        else finished!(m);
        wake?.();
      },
    });
    this.owner.set(id, slot.worker);
    slot.worker.ref();
    try {
      slot.worker.postMessage({ id, op: "start", sha512Prefix: options.sha512Prefix ? Uint8Array.from(options.sha512Prefix) : undefined });
      for await (const chunk of source) {
        sizeBytes += chunk.length;
        inFlight += chunk.length;
        postChunk(slot.worker, id, chunk, options.transfer === true);
        while (inFlight > IN_FLIGHT_BYTES && !failed) await new Promise<void>((resolve) => (wake = resolve));
        if (failed) throw failed;
      }
      if (failed) throw failed;
      slot.worker.postMessage({ id, op: "end" });
      const m = await Promise.race([done, new Promise<never>((_, reject) => (wake = () => failed && reject(failed)))]);
      return { sizeBytes, sha256: m.sha256, ...(m.sha512 ? { sha512: Buffer.from(m.sha512) } : {}) };
    } catch (err) {
      if (this.jobs.delete(id)) slot.worker.postMessage({ id, op: "drop" });
      throw err;
    } finally {
      this.owner.delete(id);
      slot.streams--;
      if (slot.streams === 0) slot.worker.unref();
    }
  }

  /**
   * Reads and hashes a whole file on a worker, by positioned reads of `fd`
   * (which the caller keeps open until this settles) from 0 to its end,
   * whatever `size` (the size it was opened at) said; `keep` hands the bytes
   * back (moved, not copied) when the file held exactly what was read.
   * `ed25519` is checked there by OpenSSL over the file held whole (see
   * SIGNED_IN_MEMORY_BYTES), else its challenge hash comes back.
   */
  async hashFile(fd: number, size: number, keep: boolean, ed25519?: Ed25519Check): Promise<FileDigests> {
    const slot = this.pick();
    const id = this.nextId++;
    slot.streams++;
    const done = new Promise<DoneMessage>((resolve, reject) => {
      this.jobs.set(id, { onAck: () => {}, onDone: (m) => (m instanceof Error ? reject(m) : resolve(m)) });
    });
    this.owner.set(id, slot.worker);
    slot.worker.ref();
    try {
      const check = ed25519 ? { publicKey: Uint8Array.from(ed25519.publicKey), signature: Uint8Array.from(ed25519.signature) } : undefined;
      slot.worker.postMessage({ id, op: "file", fd, size, keep, inMemoryBytes: SIGNED_IN_MEMORY_BYTES, ...(check ? { ed25519: check } : {}) });
      const m = await done;
      return {
        sizeBytes: m.size!, sha256: m.sha256,
        ...(m.body ? { body: Buffer.from(m.body, 0, m.bodyLength) } : {}),
        ...(m.sha512 ? { sha512: Buffer.from(m.sha512) } : {}),
        ...(m.signatureValid !== undefined ? { signatureValid: m.signatureValid } : {}),
      };
    } finally {
      this.jobs.delete(id);
      this.owner.delete(id);
      slot.streams--;
      if (slot.streams === 0) slot.worker.unref();
    }
  }
}

/** Moves the chunk's memory to the worker when the chunk owns all of it; copies it otherwise (pooled or shared memory). */
function postChunk(worker: Worker, id: number, chunk: Uint8Array, transfer: boolean): void {
  const buffer = chunk.buffer;
  if (transfer && buffer instanceof ArrayBuffer && chunk.byteOffset === 0 && chunk.byteLength === buffer.byteLength) {
    try {
      worker.postMessage({ id, op: "data", bytes: buffer, offset: 0, length: chunk.byteLength }, [buffer]);
      return;
    } catch {
      // Node marks some buffers untransferable (its allocation pool): copy those.
    }
  }
  // A real copy: Buffer#slice would be a view of the same memory.
  const copy = new Uint8Array(chunk.byteLength);
  copy.set(chunk);
  worker.postMessage({ id, op: "data", bytes: copy.buffer, offset: 0, length: copy.byteLength }, [copy.buffer]);
}

let shared: HashPool | undefined;

/**
 * Files below this are hashed on the calling thread: starting a worker costs about 90 ms of CPU (Node loads its
 * internals again in each thread), as much as hashing tens of MiB here, while a store's records, feeds, pages and small
 * zips each take a few milliseconds. Larger files (disk images, big zips) still spread over the workers.
 */
export const INLINE_HASH_BELOW_BYTES = 1 << 20;

/** The start of an Ed25519 challenge hash: SHA-512 over R (the signature's first half) ‖ A (the public key), the message to follow. */
function challengeHash(ed25519: Ed25519Check): Hash {
  return createHash("sha512").update(ed25519.signature.subarray(0, 32)).update(ed25519.publicKey);
}

/** As the worker's hashFile, here, where a signature is left to the caller: over the kept bytes, else by its challenge hash. */
function hashFileHere(fd: number, size: number, keep: boolean, ed25519: Ed25519Check | undefined): FileDigests {
  const sha256 = createHash("sha256");
  let sha512 = ed25519 && !keep ? challengeHash(ed25519) : undefined;
  let read = 0;
  let body: Buffer | undefined;
  if (keep) {
    body = Buffer.allocUnsafeSlow(size);
    for (let n = 1; read < size && n > 0; read += n) n = readSync(fd, body, read, size - read, read);
    if (read < size) body = body.subarray(0, read);
    sha256.update(body);
  }
  const scratch = Buffer.allocUnsafe(64 << 10);
  for (let n = readSync(fd, scratch, 0, scratch.length, read); n > 0; n = readSync(fd, scratch, 0, scratch.length, read)) {
    // The file grew after it was opened: its bytes are not the ones the caller sized, so none are kept.
    if (body && ed25519) sha512 = challengeHash(ed25519).update(body);
    body = undefined;
    sha256.update(scratch.subarray(0, n));
    sha512?.update(scratch.subarray(0, n));
    read += n;
  }
  return { sizeBytes: read, sha256: sha256.digest("hex"), ...(body ? { body } : {}), ...(sha512 ? { sha512: sha512.digest() } : {}) };
}

/**
 * SHA-256 of a whole file by its descriptor, read and hashed on a pool worker (see HashPool.hashFile), or here when
 * small; with `keep`, its bytes too. With `ed25519` the result says whether it verifies (`signatureValid`, a worker),
 * or holds the bytes (`keep`) or the challenge hash (`sha512`) to check it by.
 */
export async function hashFileOffThread(fd: number, size: number, keep: boolean, ed25519?: Ed25519Check): Promise<FileDigests> {
  if (size < INLINE_HASH_BELOW_BYTES) return hashFileHere(fd, size, keep, ed25519);
  shared ??= new HashPool(Math.max(1, os.availableParallelism()));
  return shared.hashFile(fd, size, keep, ed25519);
}

/**
 * SHA-256 (and optionally a prefixed SHA-512) of a stream, computed off the
 * main thread. The pool has one worker per core and lives for the process
 * (its idle workers do not keep the process alive).
 */
export function hashOffThread(source: AsyncIterable<Uint8Array>, options: HashOptions = {}): Promise<StreamDigests> {
  shared ??= new HashPool(Math.max(1, os.availableParallelism()));
  return shared.hash(source, options);
}
