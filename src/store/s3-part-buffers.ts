/**
 * The buffers an S3 store reads upload parts into: at most `count` of
 * `size` bytes, made on first use and reused by every upload of the store
 * (staged or not, one after another or at once), so a publish's uploads hold
 * partSize × queueSize bytes in all, and leave none behind as garbage for
 * V8 to collect whenever it gets to it (a new set per upload did: tens of MB
 * of dead ArrayBuffers at the end of a publish to S3).
 */
export class PartBuffers {
  private readonly free: Buffer[] = [];
  private made = 0;
  private readonly waiting: Array<(buffer: Buffer) => void> = [];

  constructor(private readonly size: number, private readonly count: number) {}

  /**
   * A buffer of at least `bytes`, when one is free. A part larger than the
   * store's part size (a file of more than 10,000 parts) gets a buffer of
   * its own, dropped on release.
   */
  async acquire(bytes: number): Promise<Buffer> {
    if (bytes > this.size) return Buffer.allocUnsafeSlow(bytes);
    const ready = this.free.pop();
    if (ready) return ready;
    if (this.made < this.count) {
      this.made++;
      return Buffer.allocUnsafeSlow(this.size);
    }
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  release(buffer: Buffer): void {
    if (buffer.length !== this.size) return;
    const next = this.waiting.shift();
    if (next) next(buffer);
    else this.free.push(buffer);
  }

  /** Buffers of the store's part size made so far (never more than `count`). */
  get buffersMade(): number {
    return this.made;
  }
}
