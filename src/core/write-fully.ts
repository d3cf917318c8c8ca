import path from "node:path";
import type { FileHandle } from "node:fs/promises";
import { RelcastError } from "./errors.js";

/** A full disk or quota while writing `file` (a temp file): relcast's input, not its bug; anything else as it is. */
function tempSpaceError(err: unknown, file: string): unknown {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  if (code !== "ENOSPC" && code !== "EDQUOT") return err;
  return noRoom(file, code === "ENOSPC" ? "no space left on the device" : "the disk quota is used up", err);
}

function noRoom(file: string, why: string, cause?: unknown): RelcastError {
  return new RelcastError(
    "E_INPUT",
    `${why} in the temp folder ${path.dirname(file)} while writing ${path.basename(file)}, the unpacked files delta updates are made from`,
    "free space there, or point TMPDIR at a folder on a disk with room for the zips and their unpacked files (or lower `deltas.maximum`), and run the command again",
    { cause },
  );
}

/**
 * Writes all of `bytes` at `position` of the temp file `file`. A positional
 * write may write less than asked (a disk filling up): the rest is written
 * again, and a write that makes no progress, or ENOSPC/EDQUOT, is an
 * E_INPUT error naming the temp folder and the fix, not a short file found
 * later as a relcast bug.
 */
export async function writeFullyAt(fh: FileHandle, bytes: Buffer, position: number, file: string): Promise<void> {
  for (let done = 0; done < bytes.length; ) {
    let written: number;
    try {
      ({ bytesWritten: written } = await fh.write(bytes, done, bytes.length - done, position + done));
    } catch (err) {
      throw tempSpaceError(err, file);
    }
    if (written <= 0) throw noRoom(file, `a write stopped after ${done} of ${bytes.length} bytes (the disk is likely full)`);
    done += written;
  }
}
