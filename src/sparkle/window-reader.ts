/**
 * A yauzl reader over a zip that lies elsewhere (an object in a store, read
 * by byte ranges): every read is answered from a few cached windows, each
 * one fetch of at least `windowBytes`. yauzl reads the end record and then
 * the central directory in many small pieces (two per entry), and each as
 * its own request or stream would cost more than the bytes: a 3,000-entry
 * directory is then a couple of fetches. Ranges larger than a window
 * (an entry's data) are streamed from the source when it can stream.
 */
import { PassThrough, Readable } from "node:stream";
import yauzl from "yauzl";

export interface WindowSource {
  size: number;
  /** Bytes [start, end) (end exclusive), all of them. */
  fetch(start: number, end: number): Promise<Buffer>;
  /** Optional: bytes [start, end) as a stream, for ranges longer than a window. */
  stream?(start: number, end: number): Promise<Readable>;
}

export interface WindowOptions {
  /** One fetch reads at least this many bytes (fewer only at the end of the zip). */
  windowBytes: number;
  /** Windows kept; the oldest goes first. */
  keptWindows: number;
}

interface Window {
  start: number;
  end: number;
  bytes: Promise<Buffer>;
}

export class WindowReader extends yauzl.RandomAccessReader {
  private readonly windows: Window[] = [];

  constructor(
    private readonly source: WindowSource,
    private readonly options: WindowOptions,
  ) {
    super();
  }

  /** Bytes [start, end) from a cached window, fetching one that holds them when none does. */
  async bytes(start: number, end: number): Promise<Buffer> {
    let w = this.windows.find((c) => start >= c.start && end <= c.end);
    if (!w) {
      const last = Math.min(this.source.size, Math.max(end, start + this.options.windowBytes));
      if (end > last) throw new Error(`bytes ${start}-${end - 1} lie beyond the zip's ${this.source.size} bytes`);
      const fetched = this.source.fetch(start, last).then((bytes) => {
        if (bytes.length !== last - start) throw new Error(`a ranged read of bytes ${start}-${last - 1} returned ${bytes.length} bytes`);
        return bytes;
      });
      const added: Window = { start, end: last, bytes: fetched };
      w = added;
      // A failed fetch is not kept: the next read asks again.
      fetched.catch(() => {
        const at = this.windows.indexOf(added);
        if (at >= 0) this.windows.splice(at, 1);
      });
      this.windows.push(added);
      if (this.windows.length > this.options.keptWindows) this.windows.shift();
    }
    const bytes = await w.bytes;
    return bytes.subarray(start - w.start, end - w.start);
  }

  /** yauzl's small reads (headers, the directory's records), answered without a stream each. */
  override read(buffer: Buffer, offset: number, length: number, position: number, callback: (err: Error | null) => void): void {
    this.bytes(position, position + length).then(
      (bytes) => {
        bytes.copy(buffer, offset);
        callback(null);
      },
      (err: Error) => callback(err),
    );
  }

  override _readStreamForRange(start: number, end: number): Readable {
    const out = new PassThrough();
    const opened = end - start > this.options.windowBytes && this.source.stream ? this.source.stream(start, end) : this.bytes(start, end).then((b) => Readable.from([b]));
    opened.then(
      (stream) => {
        stream.on("error", (err) => out.destroy(err));
        stream.pipe(out);
      },
      (err: Error) => out.destroy(err),
    );
    return out;
  }
}
