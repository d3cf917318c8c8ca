import * as crypto from "node:crypto";
import * as fs from "node:fs";
import os from "node:os";
import { Worker } from "node:worker_threads";
import * as zlib from "node:zlib";
import { runChunkJob, type ChunkJob, type ChunkResult } from "./chunk-job.js";

/** Below this many bytes of files the main thread zips alone: starting workers would cost more than they save. */
export const WORKERS_FROM_BYTES = 8 << 20;
/** Jobs sent to one worker before it answers: the next one is waiting when it finishes, so it never idles on the main thread. */
const JOBS_PER_WORKER = 2;
/**
 * At most this many workers: each costs about 8.5 MB of RSS, and the zip's
 * read-ahead (24 MiB of 1 MiB chunks, two per worker) keeps no more than 12
 * busy; 8 keeps a large machine's peak RSS in bounds.
 */
const MAX_WORKERS = 8;

/**
 * A worker's young generation: its garbage is zlib's 16 KiB output pieces,
 * so a small one is collected often and cheaply instead of growing to V8's
 * default of tens of MiB per thread (measured on the bench bundle: peak RSS
 * 205 MB with the default, 181-191 MB with 2 MiB, same time).
 */
const YOUNG_GENERATION_MB = 2;

/**
 * The worker runs runChunkJob's own source text. Inline source rather than a
 * file beside this one (as in core/hash-pool.ts): the same code then runs from
 * dist/, from the bundled binary and Action, and from src/ under the tests.
 * Each answer moves its buffers to the main thread instead of copying them.
 */
const WORKER_SOURCE = `
const { parentPort } = require("node:worker_threads");
const deps = { fs: require("node:fs"), zlib: require("node:zlib"), crypto: require("node:crypto") };
const runChunkJob = (${runChunkJob.toString()});
// A view of a buffer of its own moves as it is; a view into a shared one (zlib's small outputs) is copied first.
const own = (view) => (view.byteOffset === 0 && view.byteLength === view.buffer.byteLength ? view : new Uint8Array(view));
parentPort.on("message", ({ id, job }) => {
  let result;
  try {
    result = runChunkJob(job, deps);
  } catch (err) {
    parentPort.postMessage({ id, error: String((err && err.message) || err), code: err && typeof err.code === "string" ? err.code : undefined });
    return;
  }
  const deflated = result.deflated && own(result.deflated);
  parentPort.postMessage({ id, raw: result.raw, deflated, sha1: result.sha1 }, deflated ? [result.raw.buffer, deflated.buffer] : [result.raw.buffer]);
});
`;

interface Waiting {
  id: number;
  job: ChunkJob;
  priority: number;
  resolve: (result: ChunkResult) => void;
  reject: (err: Error) => void;
}

interface Slot {
  worker: Worker;
  running: Map<number, Waiting>;
}

/**
 * Runs chunk jobs: on one worker thread per core for a large bundle, on the
 * main thread for a small one. Waiting jobs start lowest priority first (the
 * zip's order), so the chunk the writer needs next is never stuck behind
 * read-ahead.
 */
export class ChunkPool {
  private readonly slots: Slot[] = [];
  private readonly waiting: Waiting[] = [];
  private nextId = 0;
  private failure: Error | undefined;

  private constructor(workers: number) {
    try {
      for (let i = 0; i < workers; i++) this.slots.push(this.startWorker());
    } catch (err) {
      void this.close();
      throw err;
    }
  }

  private startWorker(): Slot {
    const slot: Slot = { worker: new Worker(WORKER_SOURCE, { eval: true, resourceLimits: { maxYoungGenerationSizeMb: YOUNG_GENERATION_MB } }), running: new Map() };
    slot.worker.on("message", (m: { id: number; error?: string; code?: string; raw?: Uint8Array; deflated?: Uint8Array; sha1?: string }) => {
      const job = slot.running.get(m.id);
      if (job === undefined) return; // the pool failed or was closed and has settled it already
      slot.running.delete(m.id);
      if (m.error !== undefined) job.reject(Object.assign(new Error(m.error), m.code === undefined ? {} : { code: m.code }));
      else job.resolve({ raw: m.raw!, ...(m.deflated ? { deflated: m.deflated } : {}), ...(m.sha1 ? { sha1: m.sha1 } : {}) });
      this.dispatch();
    });
    slot.worker.on("error", (err) => this.fail(err));
    slot.worker.on("messageerror", (err) => this.fail(err));
    slot.worker.on("exit", (code) => this.fail(new Error(`a zip worker thread stopped (exit code ${code}), most likely out of memory`)));
    return slot;
  }

  /** One worker per core, or none: jobs then run on the calling thread. */
  static start(threads: boolean): ChunkPool {
    return new ChunkPool(threads ? Math.min(os.availableParallelism(), MAX_WORKERS) : 0);
  }

  run(job: ChunkJob, priority: number): Promise<ChunkResult> {
    if (this.failure) return Promise.reject(this.failure);
    if (this.slots.length === 0) return new Promise((resolve) => resolve(runChunkJob(job, { fs, zlib, crypto })));
    return new Promise((resolve, reject) => {
      let at = this.waiting.length;
      while (at > 0 && this.waiting[at - 1]!.priority > priority) at--;
      this.waiting.splice(at, 0, { id: this.nextId++, job, priority, resolve, reject });
      this.dispatch();
    });
  }

  private dispatch(): void {
    for (const slot of this.slots) {
      while (slot.running.size < JOBS_PER_WORKER && this.waiting.length > 0) {
        const next = this.waiting.shift()!;
        slot.running.set(next.id, next);
        slot.worker.postMessage({ id: next.id, job: next.job });
      }
    }
  }

  private fail(err: Error): void {
    if (this.failure) return;
    this.failure = err;
    for (const job of [...this.waiting, ...this.slots.flatMap((s) => [...s.running.values()])]) job.reject(err);
    this.waiting.length = 0;
    for (const slot of this.slots) slot.running.clear();
  }

  /** Stops the workers; jobs still waiting or running are rejected, and later ones refused. */
  async close(): Promise<void> {
    const slots = [...this.slots];
    for (const slot of slots) slot.worker.removeAllListeners("exit");
    this.fail(new Error("the zip's worker pool was closed"));
    await Promise.all(slots.map((s) => s.worker.terminate()));
  }
}
