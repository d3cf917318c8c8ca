import type { FileHandle } from "node:fs/promises";

/** Buffers per writev call: well under IOV_MAX (1024 on Linux and macOS). */
const BATCH = 512;

/**
 * Writes every buffer, in order, with as few writev calls as possible; a
 * short write is resumed where it stopped. `position`: where the first byte
 * goes (default: the file's current position, for a file written in order).
 */
export async function writeAll(handle: FileHandle, buffers: readonly Buffer[], position?: number): Promise<void> {
  const left = [...buffers];
  let at = position;
  let index = 0;
  while (index < left.length) {
    let { bytesWritten } = await handle.writev(left.slice(index, index + BATCH), at);
    if (at !== undefined) at += bytesWritten;
    // Skip the buffers written in full, then go on with the rest of the partial one.
    while (index < left.length && bytesWritten >= left[index]!.length) bytesWritten -= left[index++]!.length;
    if (bytesWritten > 0) left[index] = left[index]!.subarray(bytesWritten);
  }
}
