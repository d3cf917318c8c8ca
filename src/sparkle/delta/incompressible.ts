/**
 * Which parts of a delta's payload are not worth compressing. A plugin that
 * ships model files ships gigabytes of quantized weights that no codec
 * shrinks: `xz -6` spends about a minute per 64 MiB of such data on the
 * shared machine and gains nothing (measured in docs/sparkle.md), so a delta
 * that carries a multi-GiB file whole would take hours to compress.
 *
 * A whole file of at least `minFileBytes` is judged block by block as it is
 * written to the payload (never held whole): the first SAMPLE_PIECE bytes of
 * every MiB of a BLOCK_BYTES block are deflated together at level 1, and a
 * block whose sample shrinks by less than MIN_SAVING is stored (LZMA2
 * uncompressed chunks, DEFLATE stored blocks) instead of compressed. Blocks,
 * not files: a model file's header (tokenizer tables, JSON metadata)
 * compresses well and stays compressed; its weights do not. The sample is
 * 1/64 of the data, at deflate's fastest level.
 */
import { deflateRawSync } from "node:zlib";

export const BLOCK_BYTES = 16 * 1024 * 1024;
const SAMPLE_EVERY = 1024 * 1024;
const SAMPLE_PIECE = 16 * 1024;
/** A sample that deflate -1 shrinks by less than this is "incompressible" (random data: −0.03 %). */
const MIN_SAVING = 0.03;
/** Whole files below this are always compressed: only big ones cost minutes. */
export const DEFAULT_STORE_MIN_FILE_BYTES = 64 * 1024 * 1024;

/** The size from which whole files are checked (RELCAST_DELTA_STORE_MIN_BYTES overrides, for tests and for experiments). */
export function storeMinFileBytes(): number {
  const raw = process.env.RELCAST_DELTA_STORE_MIN_BYTES;
  const n = raw === undefined || raw === "" ? NaN : Number(raw);
  return Number.isSafeInteger(n) && n > 0 ? n : DEFAULT_STORE_MIN_FILE_BYTES;
}

/** A byte range of the payload, [start, end). */
export interface PayloadRange {
  start: number;
  end: number;
}

export function isIncompressible(sample: Buffer): boolean {
  if (sample.length === 0) return false;
  return deflateRawSync(sample, { level: 1 }).length > sample.length * (1 - MIN_SAVING);
}

/**
 * Follows one whole file's bytes as they go into the payload at `offset` and
 * collects the blocks to store into `ranges` (adjacent ranges merged).
 */
export class BlockJudge {
  private blockStart: number;
  private seen = 0;
  private sample: Buffer[] = [];

  constructor(
    offset: number,
    private readonly ranges: PayloadRange[],
  ) {
    this.blockStart = offset;
  }

  /** Bytes of the stored blocks so far. */
  stored = 0;

  update(chunk: Buffer): void {
    for (let at = 0; at < chunk.length; ) {
      // Never past the next MiB: each step sees at most one sampled piece.
      const take = Math.min(chunk.length - at, BLOCK_BYTES - this.seen, SAMPLE_EVERY - (this.seen % SAMPLE_EVERY));
      // The part of [seen, seen + take) that falls in this MiB's sampled piece.
      const inPiece = SAMPLE_PIECE - (this.seen % SAMPLE_EVERY);
      if (inPiece > 0) this.sample.push(Buffer.from(chunk.subarray(at, at + Math.min(take, inPiece))));
      this.seen += take;
      at += take;
      if (this.seen === BLOCK_BYTES) this.endBlock();
    }
  }

  /** Closes the last (short) block. */
  finish(): void {
    if (this.seen > 0) this.endBlock();
  }

  private endBlock(): void {
    const start = this.blockStart;
    const end = start + this.seen;
    if (isIncompressible(Buffer.concat(this.sample))) {
      const last = this.ranges[this.ranges.length - 1];
      if (last && last.end === start) last.end = end;
      else this.ranges.push({ start, end });
      this.stored += end - start;
    }
    this.blockStart = end;
    this.seen = 0;
    this.sample = [];
  }
}
