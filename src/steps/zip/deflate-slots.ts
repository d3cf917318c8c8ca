import os from "node:os";

/**
 * How many deflate jobs run at once. zlib's async jobs and file reads share
 * libuv's thread pool (UV_THREADPOOL_SIZE, 4 by default): one thread is kept
 * for reads and writes, so the next chunk is read while the others deflate
 * instead of waiting behind them.
 */
export function deflateSlotCount(): number {
  const pool = Number(process.env.UV_THREADPOOL_SIZE) || 4;
  return Math.max(1, Math.min(pool - 1, os.availableParallelism() + 1));
}

/** A counting semaphore for deflate jobs; jobs start in the order they were asked for. */
export class DeflateSlots {
  private running = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(private readonly limit = deflateSlotCount()) {}

  async run<T>(job: () => Promise<T>): Promise<T> {
    if (this.running >= this.limit) await new Promise<void>((resolve) => this.waiting.push(resolve));
    else this.running++;
    try {
      return await job();
    } finally {
      const next = this.waiting.shift();
      if (next) next();
      else this.running--;
    }
  }
}
