import { open, type FileHandle } from "node:fs/promises";
import { constants, deflateRaw } from "node:zlib";

/** Files are cut into chunks this size; each is deflated on its own in the thread pool (pigz's scheme). */
export const CHUNK_BYTES = 1 << 20;
const WINDOW_BYTES = 32 * 1024;

export interface DeflatedChunk {
  raw: Buffer;
  /** Absent when the file is stored: its first chunk did not shrink (random or already compressed data). */
  deflated?: Promise<Buffer>;
  last: boolean;
}

function deflateChunk(raw: Buffer, dictionary: Buffer | undefined, last: boolean, level: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    // Every chunk but the last ends on a sync flush (byte-aligned, no final-block bit), so the chunks
    // concatenate into one valid deflate stream; the previous 32 KiB as dictionary keeps the ratio
    // close to a single-stream deflate. Both depend only on content, so the output is reproducible.
    const options = { level, finishFlush: last ? constants.Z_FINISH : constants.Z_SYNC_FLUSH, ...(dictionary ? { dictionary } : {}) };
    deflateRaw(raw, options, (err, out) => (err ? reject(err) : resolve(out)));
  });
}

/**
 * Reads a file in order and starts a deflate job per chunk as it goes; the
 * caller pulls at its own pace, which bounds how many chunks are in memory.
 */
export async function* deflatedChunks(file: string, size: number, level: number): AsyncGenerator<DeflatedChunk> {
  if (size === 0) {
    yield { raw: Buffer.alloc(0), deflated: deflateChunk(Buffer.alloc(0), undefined, true, level), last: true };
    return;
  }
  const handle = await open(file, "r");
  try {
    let position = 0;
    let previous: Buffer | undefined;
    let store = false;
    while (position < size) {
      const raw = await readExactly(handle, file, position, Math.min(CHUNK_BYTES, size - position));
      position += raw.length;
      const last = position >= size;
      if (store) {
        yield { raw, last };
        continue;
      }
      const dictionary = previous ? previous.subarray(Math.max(0, previous.length - WINDOW_BYTES)) : undefined;
      const deflated = deflateChunk(raw, dictionary, last, level);
      deflated.catch(() => undefined); // the writer awaits it in order
      // A large file whose first MiB does not shrink is stored whole without deflating the rest:
      // a choice made from content alone, so it keeps the zip reproducible.
      if (previous === undefined && !last) store = (await deflated).length >= raw.length;
      yield store ? { raw, last } : { raw, deflated, last };
      previous = raw;
    }
  } finally {
    await handle.close();
  }
}

async function readExactly(handle: FileHandle, file: string, position: number, want: number): Promise<Buffer> {
  const raw = Buffer.allocUnsafe(want);
  let filled = 0;
  while (filled < want) {
    const { bytesRead } = await handle.read(raw, filled, want - filled, position + filled);
    if (bytesRead === 0) throw new Error(`${file} shrank while it was being zipped`);
    filled += bytesRead;
  }
  return raw;
}
