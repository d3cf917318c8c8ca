/**
 * A delta's body, read in order straight from its decoder (delta-decoder.ts):
 * nothing is written to disk, and decompression stops at a byte limit (the claimed
 * sizes, see delta-limits.ts), so a small file that inflates to gigabytes
 * costs at most one pipe buffer beyond what its items claim.
 */
import { createReadStream } from "node:fs";
import type { Readable } from "node:stream";
import type { Hash } from "node:crypto";
import type { FileHandle } from "node:fs/promises";
import { RelcastError } from "../../core/errors.js";
import type { CompressionName } from "./delta-format.js";
import { openDecoder } from "./delta-decoder.js";

/** Buffered ahead of the reader before the decompressor is paused. */
const HIGH_WATER = 1 << 20;

export class DeltaBody {
  private chunks: Buffer[] = [];
  private buffered = 0;
  private produced = 0;
  private ended = false;
  private failure: Error | undefined;
  private wake: (() => void) | undefined;
  /** Bytes taken so far. */
  position = 0;

  constructor(
    private readonly source: Readable,
    private readonly stopDecoder: (() => void) | undefined,
    private readonly name: string,
    private limit: number,
    private readonly childExit: Promise<string | undefined>,
  ) {
    source.on("data", (chunk: Buffer) => {
      this.chunks.push(chunk);
      this.buffered += chunk.length;
      this.produced += chunk.length;
      if (this.produced > this.limit) this.fail(this.overLimit());
      else if (this.buffered >= HIGH_WATER) source.pause();
      this.notify();
    });
    source.once("end", () => {
      this.ended = true;
      this.notify();
    });
    source.once("error", (err) => this.fail(err));
  }

  private overLimit(): RelcastError {
    return new RelcastError(
      "E_INPUT",
      `${this.name} decompresses to more than the ${this.limit} bytes its header and items claim.`,
      "The delta is damaged or hostile: do not publish or apply it; recreate it with `relcast delta create`.",
    );
  }

  private fail(err: Error): void {
    this.failure ??= err;
    this.stop();
    this.notify();
  }

  private notify(): void {
    const wake = this.wake;
    this.wake = undefined;
    wake?.();
  }

  /** Reads at most `limit` decompressed bytes in all (past the ones already read, counting from the start). */
  setLimit(limit: number): void {
    this.limit = limit;
    if (this.produced > limit) this.fail(this.overLimit());
  }

  private async fill(n: number): Promise<void> {
    while (this.buffered < n && !this.ended && !this.failure) {
      this.source.resume();
      await new Promise<void>((resolve) => (this.wake = resolve));
    }
    if (this.failure) throw this.failure;
    if (this.buffered < n) {
      const codecProblem = await this.childExit;
      throw new RelcastError("E_VERIFY", `${this.name} is not a valid Sparkle delta: it ends early (wanted ${n} bytes at ${this.position})${codecProblem ? `; ${codecProblem}` : ""}.`, "Recreate the delta with `relcast delta create`.");
    }
  }

  /** Takes `n` buffered bytes without copying what stays buffered (many reads are a byte or two). */
  private take(n: number): Buffer {
    const first = this.chunks[0]!;
    let out: Buffer;
    if (first.length >= n) {
      out = first.subarray(0, n);
      if (first.length === n) this.chunks.shift();
      else this.chunks[0] = first.subarray(n);
    } else {
      out = Buffer.allocUnsafe(n);
      for (let at = 0; at < n; ) {
        const chunk = this.chunks[0]!;
        const k = Math.min(chunk.length, n - at);
        chunk.copy(out, at, 0, k);
        at += k;
        if (k === chunk.length) this.chunks.shift();
        else this.chunks[0] = chunk.subarray(k);
      }
    }
    this.buffered -= n;
    this.position += n;
    if (this.buffered < HIGH_WATER && !this.ended) this.source.resume();
    return out;
  }

  async bytes(n: number): Promise<Buffer> {
    if (n === 0) return Buffer.alloc(0);
    await this.fill(n);
    return this.take(n);
  }

  /** Passes the next `n` bytes to `each` in chunks of at most HIGH_WATER. */
  private async each(n: number, each: (chunk: Buffer) => Promise<void> | void): Promise<void> {
    for (let left = n; left > 0; ) {
      const step = Math.min(left, HIGH_WATER);
      await each(await this.bytes(step));
      left -= step;
    }
  }

  hashNext(n: number, hash: Hash): Promise<void> {
    return this.each(n, (chunk) => void hash.update(chunk));
  }

  copyTo(fh: FileHandle, n: number): Promise<void> {
    return this.each(n, async (chunk) => void (await fh.write(chunk)));
  }

  /** True when no byte follows. */
  async atEnd(): Promise<boolean> {
    await this.fill(1).catch((err: unknown) => {
      if (!(err instanceof RelcastError && err.code === "E_VERIFY" && this.ended && !this.failure)) throw err;
    });
    return this.buffered === 0;
  }

  /** The body must end here: more bytes than the items claim are refused. */
  async expectEnd(): Promise<void> {
    if (!(await this.atEnd())) {
      throw new RelcastError("E_INPUT", `${this.name} holds more data than its items claim (${this.position} bytes).`, "The delta is damaged or hostile: recreate it with `relcast delta create`.");
    }
    const codecProblem = await this.childExit;
    if (codecProblem) throw new RelcastError("E_VERIFY", `${this.name} is not a valid Sparkle delta: ${codecProblem}.`, "The delta file is damaged or not a Sparkle delta.");
  }

  stop(): void {
    this.source.destroy();
    this.stopDecoder?.();
  }

  async close(): Promise<void> {
    this.stop();
    await this.childExit.catch(() => undefined);
  }
}

/** Opens the body of `deltaFile` (after its 6-byte container header), decompressing at most `limit` bytes. */
export async function openDeltaBody(deltaFile: string, name: CompressionName, limit: number): Promise<DeltaBody> {
  const file = createReadStream(deltaFile, { start: 6 });
  if (name === "none") return new DeltaBody(file, undefined, deltaFile, limit, Promise.resolve(undefined));
  let decoder;
  try {
    decoder = await openDecoder(name);
  } catch (err) {
    file.destroy();
    throw err;
  }
  file.on("error", (err) => decoder.input.destroy(err));
  file.pipe(decoder.input);
  return new DeltaBody(decoder.output, decoder.stop, deltaFile, limit, decoder.problem);
}
