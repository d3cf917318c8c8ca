import { open, type FileHandle } from "node:fs/promises";
import { constants, deflateRaw, deflateRawSync } from "node:zlib";
import { DeflateSlots } from "./deflate-slots.js";

/** Files are cut into chunks this size; each is deflated on its own in the thread pool (pigz's scheme). */
export const CHUNK_BYTES = 1 << 20;
const WINDOW_BYTES = 32 * 1024;
/** Files from this size on are probed before deflating; smaller ones are simply tried (and stored if they do not shrink). */
export const PROBE_FROM_BYTES = 64 * 1024;
const PROBE_BYTES = 16 * 1024;

export interface DeflatedChunk {
  raw: Buffer;
  /** Absent when the file is stored: its probes did not shrink (random or already compressed data). */
  deflated?: Promise<Buffer>;
  last: boolean;
}

function deflateChunk(slots: DeflateSlots, raw: Buffer, dictionary: Buffer | undefined, last: boolean, level: number): Promise<Buffer> {
  return slots.run(
    () =>
      new Promise((resolve, reject) => {
        // Every chunk but the last ends on a sync flush (byte-aligned, no final-block bit), so the chunks
        // concatenate into one valid deflate stream; the previous 32 KiB as dictionary keeps the ratio
        // close to a single-stream deflate. Both depend only on content, so the output is reproducible.
        const options = { level, finishFlush: last ? constants.Z_FINISH : constants.Z_SYNC_FLUSH, ...(dictionary ? { dictionary } : {}) };
        deflateRaw(raw, options, (err, out) => (err ? reject(err) : resolve(out)));
      }),
  );
}

/**
 * Whether a file is not worth deflating: 16 KiB at its start, middle and end
 * each shrink by less than 1% under fast deflate (random, encrypted or already
 * compressed data). A choice made from content alone, so the zip stays
 * reproducible; Info-ZIP deflates such files whole and then stores them.
 */
async function incompressible(handle: FileHandle, file: string, size: number, first: Buffer): Promise<boolean> {
  const probes = [first.subarray(0, PROBE_BYTES)];
  for (const at of [Math.floor(size / 2 - PROBE_BYTES / 2), size - PROBE_BYTES]) {
    probes.push(at + PROBE_BYTES <= first.length ? first.subarray(at, at + PROBE_BYTES) : await readExactly(handle, file, at, PROBE_BYTES));
  }
  return probes.every((probe) => deflateRawSync(probe, { level: 1 }).length >= probe.length * 0.99);
}

/**
 * Reads a file in order and starts a deflate job per chunk as it goes; the
 * caller pulls at its own pace, which bounds how many chunks are in memory.
 * Deflate jobs wait for a slot, so reads are never queued behind them.
 */
export async function* deflatedChunks(file: string, size: number, level: number, slots: DeflateSlots): AsyncGenerator<DeflatedChunk> {
  if (size === 0) {
    yield { raw: Buffer.alloc(0), deflated: deflateChunk(slots, Buffer.alloc(0), undefined, true, level), last: true };
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
      if (previous === undefined && size >= PROBE_FROM_BYTES) store = await incompressible(handle, file, size, raw);
      if (store) {
        yield { raw, last };
        continue;
      }
      const dictionary = previous ? previous.subarray(Math.max(0, previous.length - WINDOW_BYTES)) : undefined;
      const deflated = deflateChunk(slots, raw, dictionary, last, level);
      deflated.catch(() => undefined); // the writer awaits it in order
      yield { raw, deflated, last };
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
