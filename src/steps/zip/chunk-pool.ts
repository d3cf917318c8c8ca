import * as crypto from "node:crypto";
import * as fs from "node:fs";
import os from "node:os";
import { Worker } from "node:worker_threads";
import * as zlib from "node:zlib";
import { fitsSmallFrame, newChunkFrame, newSmallFrame, runChunkJob, SMALL_JOB_BYTES, type ChunkFrame, type ChunkJob, type ChunkResult } from "./chunk-job.js";

/** Below this many bytes of files the main thread zips alone: starting workers would cost more than they save. */
export const WORKERS_FROM_BYTES = 8 << 20;
/** Jobs sent to one worker before it answers: the next one is waiting when it finishes, so it never idles on the main thread. */
const JOBS_PER_WORKER = 2;
/**
 * At most this many workers: each costs about 8.5 MB of RSS plus its three
 * frames (about 2 MiB each, see ChunkPool.start); 8 keeps a large machine's
 * peak RSS in bounds.
 */
const MAX_WORKERS = 8;
/**
 * Small frames (whole files up to SMALL_JOB_BYTES, about 258 KiB each at
 * most, less for the files they hold): enough small files ahead of the
 * writer that the workers keep busy while it flushes its buffer and feeds
 * the digests. With the chunk frames alone, 8 on 2 cores, they idled 15-20%
 * of the bench zip waiting for a frame the writer had not yet given back.
 */
const SMALL_FRAMES = 24;

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
parentPort.on("message", ({ id, job, frame }) => {
  const moved = [frame.input, frame.output];
  let result;
  try {
    result = runChunkJob(job, deps, frame);
  } catch (err) {
    parentPort.postMessage({ id, frame, error: String((err && err.message) || err), code: err && typeof err.code === "string" ? err.code : undefined }, moved);
    return;
  }
  // An output too large for the frame is a buffer of this thread's: copied unless it is its own buffer whole.
  let deflated = result.deflated;
  if (deflated && deflated.buffer !== frame.output) {
    if (deflated.byteOffset !== 0 || deflated.byteLength !== deflated.buffer.byteLength) deflated = new Uint8Array(deflated);
    moved.push(deflated.buffer);
  }
  parentPort.postMessage({ id, frame, raw: result.raw, deflated, sha1: result.sha1 }, moved);
});
`;

interface Waiting {
  id: number;
  job: ChunkJob;
  priority: number;
  resolve: (result: PooledResult) => void;
  reject: (err: Error) => void;
}

interface Running extends Waiting {
  frame: ChunkFrame;
}

/** One kind of frame: made on first use up to `max`, and those held now with their job's priority. */
class FrameSet {
  readonly free: ChunkFrame[] = [];
  readonly held = new Map<ChunkFrame, number>();
  made = 0;
  constructor(readonly max: number, private readonly make: () => ChunkFrame) {}

  /** A frame for a job of this priority, or none yet: the last one goes only to a job before every holder (see ChunkPool). */
  take(priority: number): ChunkFrame | undefined {
    const available = this.free.length + (this.max - this.made);
    if (available === 0) return undefined;
    if (available === 1) {
      for (const heldBy of this.held.values()) if (heldBy <= priority) return undefined;
    }
    let frame = this.free.pop();
    if (frame === undefined) {
      frame = this.make();
      this.made++;
    }
    this.held.set(frame, priority);
    return frame;
  }

  clear(): void {
    this.held.clear();
    this.free.length = 0;
  }
}

interface Slot {
  worker: Worker;
  running: Map<number, Running>;
}

/** A job's result and the frame it lies in, to give back with `release` once its bytes have been used. */
export interface PooledResult extends ChunkResult {
  readonly frame: ChunkFrame;
}

/**
 * Runs chunk jobs: on one worker thread per core for a large bundle, on the
 * main thread for a small one. Waiting jobs start lowest priority first (the
 * zip's order), so the chunk the writer needs next is never stuck behind
 * read-ahead.
 *
 * A job runs in a frame from a fixed set (made on first use, at most
 * `frameLimit`), held until the caller releases its result: the read-ahead's
 * memory is that set, made and freed by this thread alone. There are two
 * kinds: chunk frames for any job, and small frames for the whole of a small
 * file. A job takes a frame of its kind; it may take the last free one only
 * when it comes before every job holding one of that kind, so the job the
 * writer waits for always gets a frame (a later chunk of a file, or a
 * reread, is queued after jobs of later files have started). A job that must
 * wait for a frame does not hold up a later job of the other kind.
 */
export class ChunkPool {
  private readonly slots: Slot[] = [];
  private readonly waiting: Waiting[] = [];
  private readonly chunkFrames: FrameSet;
  private readonly smallFrames: FrameSet;
  private nextId = 0;
  private failure: Error | undefined;

  private constructor(workers: number, chunkFrames: number) {
    this.chunkFrames = new FrameSet(chunkFrames, newChunkFrame);
    this.smallFrames = new FrameSet(SMALL_FRAMES, newSmallFrame);
    try {
      for (let i = 0; i < workers; i++) this.slots.push(this.startWorker());
    } catch (err) {
      void this.close();
      throw err;
    }
  }

  private startWorker(): Slot {
    const slot: Slot = { worker: new Worker(WORKER_SOURCE, { eval: true, resourceLimits: { maxYoungGenerationSizeMb: YOUNG_GENERATION_MB } }), running: new Map() };
    slot.worker.on("message", (m: { id: number; frame: ChunkFrame; error?: string; code?: string; raw?: Uint8Array; deflated?: Uint8Array; sha1?: string }) => {
      const job = slot.running.get(m.id);
      if (job === undefined) return; // the pool failed or was closed and has settled it already
      slot.running.delete(m.id);
      // The frame came back as new ArrayBuffer objects over the same memory: hold those instead.
      // (The frame sent is detached here, so its kind is the job's.)
      const frames = fitsSmallFrame(job.job) ? this.smallFrames : this.chunkFrames;
      frames.held.delete(job.frame);
      if (m.error !== undefined) {
        frames.free.push(m.frame);
        job.reject(Object.assign(new Error(m.error), m.code === undefined ? {} : { code: m.code }));
      } else {
        frames.held.set(m.frame, job.priority);
        job.resolve({ frame: m.frame, raw: m.raw!, ...(m.deflated ? { deflated: m.deflated } : {}), ...(m.sha1 ? { sha1: m.sha1 } : {}) });
      }
      this.dispatch();
    });
    slot.worker.on("error", (err) => this.fail(err));
    slot.worker.on("messageerror", (err) => this.fail(err));
    slot.worker.on("exit", (code) => this.fail(new Error(`a zip worker thread stopped (exit code ${code}), most likely out of memory`)));
    return slot;
  }

  /**
   * One worker per core, or none: jobs then run on the calling thread. Frames:
   * two jobs per worker running and one more waiting to be written, plus two
   * (at least two, so the writer's next job is never starved by one read ahead);
   * and SMALL_FRAMES small frames for whole small files.
   */
  static start(threads: boolean): ChunkPool {
    const workers = threads ? Math.min(os.availableParallelism(), MAX_WORKERS) : 0;
    return new ChunkPool(workers, workers * (JOBS_PER_WORKER + 1) + 2);
  }

  run(job: ChunkJob, priority: number): Promise<PooledResult> {
    if (this.failure) return Promise.reject(this.failure);
    return new Promise((resolve, reject) => {
      let at = this.waiting.length;
      while (at > 0 && this.waiting[at - 1]!.priority > priority) at--;
      this.waiting.splice(at, 0, { id: this.nextId++, job, priority, resolve, reject });
      this.dispatch();
    });
  }

  /** Frames made so far, per kind: never more than `frameLimit`, however many jobs run. */
  get framesMade(): { chunk: number; small: number } {
    return { chunk: this.chunkFrames.made, small: this.smallFrames.made };
  }

  get frameLimit(): { chunk: number; small: number } {
    return { chunk: this.chunkFrames.max, small: this.smallFrames.max };
  }

  /** A small frame's input is exactly SMALL_JOB_BYTES; a chunk frame's is larger. (Only for a frame on this thread: one sent to a worker is detached.) */
  private setOf(frame: ChunkFrame): FrameSet {
    return frame.input.byteLength === SMALL_JOB_BYTES ? this.smallFrames : this.chunkFrames;
  }

  /** Gives a result's frame back for the next job: its `raw` and `deflated` views must not be used after this. */
  release(result: PooledResult): void {
    const frames = this.setOf(result.frame);
    if (!frames.held.delete(result.frame)) return; // released already, or the pool was closed
    frames.free.push(result.frame);
    this.dispatch();
  }

  /**
   * The first waiting job (lowest priority first) that can have a frame of
   * its kind now, taken off the queue with it. Once a kind has none for a
   * job, it has none for any later one (the last frame's rule only narrows
   * with priority), so the scan stops when both kinds have said no.
   */
  private nextJob(): Running | undefined {
    let chunkRefused = false;
    let smallRefused = false;
    for (let i = 0; i < this.waiting.length && !(chunkRefused && smallRefused); i++) {
      const waiting = this.waiting[i]!;
      const small = fitsSmallFrame(waiting.job);
      if (small ? smallRefused : chunkRefused) continue;
      const frame = (small ? this.smallFrames : this.chunkFrames).take(waiting.priority);
      if (frame === undefined) {
        if (small) smallRefused = true;
        else chunkRefused = true;
        continue;
      }
      this.waiting.splice(i, 1);
      return { ...waiting, frame };
    }
    return undefined;
  }

  private dispatch(): void {
    if (this.failure) return;
    if (this.slots.length === 0) return this.runHere();
    for (const slot of this.slots) {
      while (slot.running.size < JOBS_PER_WORKER) {
        const next = this.nextJob();
        if (next === undefined) return;
        slot.running.set(next.id, next);
        slot.worker.postMessage({ id: next.id, job: next.job, frame: next.frame }, [next.frame.input, next.frame.output]);
      }
    }
  }

  /** Without workers: each waiting job runs at once on this thread, as frames allow. */
  private runHere(): void {
    for (;;) {
      const next = this.nextJob();
      if (next === undefined) return;
      let result: ChunkResult;
      try {
        result = runChunkJob(next.job, { fs, zlib, crypto }, next.frame);
      } catch (err) {
        const frames = this.setOf(next.frame);
        frames.held.delete(next.frame);
        frames.free.push(next.frame);
        next.reject(err as Error);
        continue;
      }
      next.resolve({ ...result, frame: next.frame });
    }
  }

  private fail(err: Error): void {
    if (this.failure) return;
    this.failure = err;
    for (const job of [...this.waiting, ...this.slots.flatMap((s) => [...s.running.values()])]) job.reject(err);
    this.waiting.length = 0;
    for (const slot of this.slots) slot.running.clear();
    this.chunkFrames.clear();
    this.smallFrames.clear();
  }

  /** Stops the workers; jobs still waiting or running are rejected, and later ones refused. */
  async close(): Promise<void> {
    const slots = [...this.slots];
    for (const slot of slots) slot.worker.removeAllListeners("exit");
    this.fail(new Error("the zip's worker pool was closed"));
    await Promise.all(slots.map((s) => s.worker.terminate()));
  }
}
