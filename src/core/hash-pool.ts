import { createHash } from "node:crypto";
import { readSync } from "node:fs";
import os from "node:os";
import { Worker } from "node:worker_threads";

/**
 * Hashes streams on worker threads, so `verify` hashes on every core while
 * the main thread only moves bytes. One stream's chunks all go to one worker
 * (a hash is sequential); different streams spread over the workers.
 *
 * The worker is inline source rather than a file beside this one: the same
 * module then runs from dist/ and from src/ under the test runner, which has
 * no compiled worker file to point at.
 */
const WORKER_SOURCE = `
const { parentPort } = require("node:worker_threads");
const { createHash } = require("node:crypto");
const { readSync } = require("node:fs");
const jobs = new Map();
let scratch;
// A whole file by its descriptor (kept open by the caller until "done"): into one buffer of its size when kept, else through a reused one.
function hashFile(m) {
  const sha256 = createHash("sha256");
  let size = 0;
  let body;
  if (m.keep) {
    body = Buffer.allocUnsafeSlow(m.size);
    for (let n = 1; size < m.size && n > 0; size += n) n = readSync(m.fd, body, size, m.size - size, size);
    if (size < m.size) body = body.subarray(0, size);
    sha256.update(body);
  }
  scratch ??= Buffer.allocUnsafeSlow(1 << 20);
  for (let n = readSync(m.fd, scratch, 0, scratch.length, size); n > 0; n = readSync(m.fd, scratch, 0, scratch.length, size)) {
    sha256.update(scratch.subarray(0, n));
    size += n;
    body = undefined;
  }
  const done = { id: m.id, op: "done", sha256: sha256.digest("hex"), size };
  if (body) parentPort.postMessage({ ...done, body: body.buffer, bodyLength: body.length }, [body.buffer]);
  else parentPort.postMessage(done);
}
parentPort.on("message", (m) => {
  if (m.op === "file") {
    try {
      hashFile(m);
    } catch (err) {
      parentPort.postMessage({ id: m.id, op: "failed", message: String(err && err.message || err) });
    }
  } else if (m.op === "start") {
    const job = { sha256: createHash("sha256") };
    if (m.sha512Prefix) job.sha512 = createHash("sha512").update(Buffer.from(m.sha512Prefix));
    jobs.set(m.id, job);
  } else if (m.op === "data") {
    const job = jobs.get(m.id);
    const bytes = Buffer.from(m.bytes, m.offset, m.length);
    job.sha256.update(bytes);
    if (job.sha512) job.sha512.update(bytes);
    parentPort.postMessage({ id: m.id, op: "ack", length: m.length });
  } else if (m.op === "end") {
    const job = jobs.get(m.id);
    jobs.delete(m.id);
    parentPort.postMessage({ id: m.id, op: "done", sha256: job.sha256.digest("hex"), sha512: job.sha512 ? job.sha512.digest() : undefined });
  } else if (m.op === "drop") {
    jobs.delete(m.id);
  }
});
`;

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

type DoneMessage = { id: number; op: "done"; sha256: string; sha512?: Uint8Array; size?: number; body?: ArrayBuffer; bodyLength?: number };
type FailedMessage = { id: number; op: "failed"; message: string };

/** What hashing a file by its descriptor gives: its size, SHA-256 and, when kept, its bytes. */
export interface FileDigests {
  sizeBytes: number;
  sha256: string;
  body?: Buffer;
}
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
   */
  async hashFile(fd: number, size: number, keep: boolean): Promise<FileDigests> {
    const slot = this.pick();
    const id = this.nextId++;
    slot.streams++;
    const done = new Promise<DoneMessage>((resolve, reject) => {
      this.jobs.set(id, { onAck: () => {}, onDone: (m) => (m instanceof Error ? reject(m) : resolve(m)) });
    });
    this.owner.set(id, slot.worker);
    slot.worker.ref();
    try {
      slot.worker.postMessage({ id, op: "file", fd, size, keep });
      const m = await done;
      return { sizeBytes: m.size!, sha256: m.sha256, ...(m.body ? { body: Buffer.from(m.body, 0, m.bodyLength) } : {}) };
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

/** As the worker's hashFile, here: positioned reads of `fd` from 0 to its end, whatever `size` said. */
function hashFileHere(fd: number, size: number, keep: boolean): FileDigests {
  const sha256 = createHash("sha256");
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
    sha256.update(scratch.subarray(0, n));
    read += n;
    body = undefined; // the file grew after it was opened: its bytes are not the ones the caller sized
  }
  return { sizeBytes: read, sha256: sha256.digest("hex"), ...(body ? { body } : {}) };
}

/** SHA-256 of a whole file by its descriptor: read and hashed on a pool worker (see HashPool.hashFile), or here when small. */
export async function hashFileOffThread(fd: number, size: number, keep: boolean): Promise<FileDigests> {
  if (size < INLINE_HASH_BELOW_BYTES) return hashFileHere(fd, size, keep);
  shared ??= new HashPool(Math.max(1, os.availableParallelism()));
  return shared.hashFile(fd, size, keep);
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
