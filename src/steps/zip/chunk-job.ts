import type * as crypto from "node:crypto";
import type * as fs from "node:fs";
import type * as zlib from "node:zlib";
import type { FileIdentity } from "./bundle-entries.js";

/** Files are cut into chunks this size; each is one job (pigz's scheme). */
export const CHUNK_BYTES = 1 << 20;
/** The bytes before a chunk read again as its deflate dictionary (runChunkJob's WINDOW). */
const WINDOW_BYTES = 32 * 1024;
/** Room for a chunk's deflate output: zlib's bound for 1 MiB is about 1 MiB + 330 bytes; a larger output is returned in a buffer of its own. */
const DEFLATED_BYTES = CHUNK_BYTES + (CHUNK_BYTES >> 6);

/**
 * The memory one job works in, made once by the main thread and reused for
 * every chunk: the job reads into `input` and leaves its deflate output in
 * `output`; both move to a worker thread and back (transferred, not copied).
 * A chunk's buffers are then never allocated by one thread and freed by
 * another, which left glibc holding their pages in each worker's arena
 * (peak RSS of the 100,000-file bench bundle: see docs/performance.md).
 */
export interface ChunkFrame {
  input: ArrayBuffer;
  output: ArrayBuffer;
}

/** Untouched pages of an ArrayBuffer cost no RSS: a frame used only by small files stays small. */
export function newChunkFrame(): ChunkFrame {
  return { input: new ArrayBuffer(CHUNK_BYTES + WINDOW_BYTES), output: new ArrayBuffer(DEFLATED_BYTES) };
}

/**
 * A whole file up to this size runs in a small frame (see ChunkPool): most
 * files of a plugin are this small, and many of their jobs can then be
 * ahead of the writer in little memory.
 */
export const SMALL_JOB_BYTES = 128 * 1024;

/** A frame for one job of a whole file of at most SMALL_JOB_BYTES (no dictionary: such a job starts at offset 0). */
export function newSmallFrame(): ChunkFrame {
  return { input: new ArrayBuffer(SMALL_JOB_BYTES), output: new ArrayBuffer(SMALL_JOB_BYTES + (SMALL_JOB_BYTES >> 6)) };
}

/** Whether a job fits a small frame: the whole of a small file. */
export const fitsSmallFrame = (job: Pick<ChunkJob, "offset" | "length">): boolean => job.offset === 0 && job.length <= SMALL_JOB_BYTES;

/**
 * One chunk of one file. `mode` says how the file is stored: "auto" (the
 * file's first chunk) decides from the file's content; the file's later
 * chunks are given that decision.
 */
export interface ChunkJob {
  file: string;
  /** The file as the bundle's listing saw it; a file that is not that one any more is refused. */
  identity: FileIdentity;
  offset: number;
  length: number;
  level: number;
  mode: "auto" | "deflate" | "store";
}

export interface ChunkResult {
  /** A view into the job's frame: valid until the frame is given back to the pool. */
  raw: Uint8Array;
  /**
   * Absent when the chunk is stored: its file did not pass the probes, or (a single-chunk file) deflate did not shrink it.
   * A view into the frame's output, or (an output larger than the frame holds) a buffer of its own.
   */
  deflated?: Uint8Array;
  /**
   * SHA-1 (hex) of `raw` when the chunk is its whole file: the content hash a
   * Sparkle delta and a tree manifest need, taken here on the thread that read
   * the bytes (a longer file is hashed in order by the writer's thread).
   */
  sha1?: string;
}

export interface ChunkDeps {
  fs: Pick<typeof fs, "openSync" | "readSync" | "closeSync" | "fstatSync" | "constants">;
  zlib: Pick<typeof zlib, "deflateRawSync" | "constants">;
  crypto: Pick<typeof crypto, "createHash">;
}

/** The code of the error a job throws when the file is not the one listed (a build still writing the bundle). */
export const BUNDLE_CHANGED = "BUNDLE_CHANGED";

/**
 * Reads and compresses one chunk: the job of a zip worker thread (or of the
 * main thread, for a small bundle). Self-contained on purpose: a worker runs
 * this function's own source text (see chunk-pool.ts), so it may use only its
 * parameters, never a module-level name.
 *
 * Every chunk but the file's last ends on a sync flush (byte-aligned, no
 * final-block bit), so the chunks concatenate into one deflate stream; the
 * 32 KiB before the chunk, read again here, is its dictionary, which keeps the
 * ratio close to a single-stream deflate. The output depends on the bytes
 * alone, never on timing or on which thread ran the job.
 */
export function runChunkJob(job: ChunkJob, deps: ChunkDeps, frame: ChunkFrame): ChunkResult {
  const WINDOW = 32 * 1024; // WINDOW_BYTES: a module-level name would not exist in the worker
  /** Files from this size on are probed before deflating; smaller ones are simply tried (and stored if they do not shrink). */
  const PROBE_FROM = 64 * 1024;
  const PROBE = 16 * 1024;
  const { openSync, readSync, closeSync, fstatSync, constants } = deps.fs;
  const changed = (what: string) => Object.assign(new Error(`${job.file} ${what} while the bundle was being zipped`), { code: "BUNDLE_CHANGED" }); // BUNDLE_CHANGED: a module-level name would not exist in the worker
  // O_NOFOLLOW refuses a link in the file's place and O_NONBLOCK a pipe (which would block the open); the
  // device, inode, size and time checked below refuse anything else that is not the file the listing saw,
  // including a file reached through a folder swapped for a link.
  const fd = openSync(job.file, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  try {
    const st = fstatSync(fd);
    const seen = job.identity;
    if (!st.isFile() || st.dev !== seen.dev || st.ino !== seen.ino || st.size !== seen.size || st.mtimeMs !== seen.mtimeMs) throw changed("changed");
    const size = seen.size;
    const readAt = (into: Uint8Array, position: number) => {
      for (let filled = 0; filled < into.length; ) {
        const n = readSync(fd, into, filled, into.length - filled, position + filled);
        if (n === 0) throw changed("shrank");
        filled += n;
      }
      return into;
    };
    const deflating = job.mode !== "store";
    const from = deflating ? Math.max(0, job.offset - WINDOW) : job.offset;
    const want = job.offset + job.length - from;
    if (want > frame.input.byteLength) throw new Error(`zip chunk job: ${want} bytes do not fit the job's frame`);
    const bytes = readAt(new Uint8Array(frame.input, 0, want), from);
    const raw = bytes.subarray(job.offset - from);
    const last = job.offset + job.length >= size;
    const whole = job.offset === 0 && last ? { sha1: deps.crypto.createHash("sha1").update(raw).digest("hex") } : {};
    if (!deflating) return { raw, ...whole };
    const deflateRaw = (input: Uint8Array, level: number, last: boolean, dictionary?: Uint8Array) =>
      deps.zlib.deflateRawSync(input, { level, finishFlush: last ? deps.zlib.constants.Z_FINISH : deps.zlib.constants.Z_SYNC_FLUSH, ...(dictionary ? { dictionary } : {}) });
    if (job.mode === "auto" && size >= PROBE_FROM) {
      // Random, encrypted or already compressed data: 16 KiB at the file's start, middle and end each
      // shrink by less than 1% under fast deflate. Decided from content alone, so the zip stays reproducible.
      const probes = [Math.floor(size / 2 - PROBE / 2), size - PROBE].map((at) => (at + PROBE <= raw.length ? raw.subarray(at, at + PROBE) : readAt(new Uint8Array(PROBE), at)));
      probes.unshift(raw.subarray(0, PROBE));
      if (probes.every((probe) => deflateRaw(probe, 1, true).length >= probe.length * 0.99)) return { raw, ...whole };
    }
    const out = deflateRaw(raw, job.level, last, job.offset > 0 ? bytes.subarray(0, job.offset - from) : undefined);
    // A whole file that deflate did not shrink is stored, as Info-ZIP does (a longer file is rewritten by the writer).
    if (job.mode === "auto" && job.offset === 0 && last && out.length >= raw.length) return { raw, ...whole };
    // zlib's output is garbage of this thread once copied into the frame (freed by the thread that made it).
    if (out.length > frame.output.byteLength) return { raw, deflated: out, ...whole };
    const deflated = new Uint8Array(frame.output, 0, out.length);
    deflated.set(out);
    return { raw, deflated, ...whole };
  } finally {
    closeSync(fd);
  }
}
