/**
 * Applies one per-file patch the way Sparkle's vendored bspatch does (written
 * from its reading, sharing nothing with the creator): "BSDIFN40" with raw
 * blocks, or classic "BSDIFF40" with each block bzip2-compressed (what Debian's
 * bsdiff writes). Every length is checked before it is used.
 */
import { spawnSync } from "node:child_process";
import { RelcastError } from "../../core/errors.js";
import { MAX_DIFF_FILE_BYTES } from "./delta-limits.js";

function readOfft(buf: Buffer, at: number): number {
  let value = 0;
  for (let i = 6; i >= 0; i--) value = value * 256 + buf[at + i]!;
  value += (buf[at + 7]! & 0x7f) * 2 ** 56;
  if (value > Number.MAX_SAFE_INTEGER) throw corrupt("a length does not fit in 53 bits");
  return buf[at + 7]! & 0x80 ? -value : value;
}

function corrupt(why: string): RelcastError {
  return new RelcastError("E_VERIFY", `Corrupt binary patch: ${why}.`, "Recreate the delta; the file was damaged or not made by a bsdiff-compatible tool.");
}

/** Decompresses one block, refusing (not reading on) past `limit` bytes. */
function bunzip(block: Buffer, limit: number, what: string): Buffer {
  const run = spawnSync("bzip2", ["-dc"], { input: block, maxBuffer: limit });
  if ((run.error as NodeJS.ErrnoException | undefined)?.code === "ENOBUFS") throw tooLarge(`its ${what} block decompresses to more than the ${limit} bytes its header allows`);
  if (run.error) throw new RelcastError("E_INPUT", `Cannot run bzip2 to read a BSDIFF40 patch: ${run.error.message}.`, "Install bzip2 (Debian: apt-get install bzip2).");
  if (run.status !== 0) throw corrupt("a bzip2 block does not decompress");
  return run.stdout;
}

function tooLarge(why: string): RelcastError {
  return new RelcastError("E_INPUT", `Hostile or damaged binary patch: ${why}.`, "Do not publish or apply this delta; recreate it with `relcast delta create`.");
}

/**
 * Returns the new file's bytes. `maxNewBytes`: the largest file the patch
 * may make (the new tree's largest file when known); a header claiming more
 * is refused before anything that size is allocated or decompressed.
 */
export function applyBsdiffPatch(old: Buffer, patch: Buffer, maxNewBytes = MAX_DIFF_FILE_BYTES): Buffer {
  if (patch.length < 32) throw corrupt("shorter than its 32-byte header");
  const magic = patch.toString("latin1", 0, 8);
  if (magic !== "BSDIFN40" && magic !== "BSDIFF40") throw corrupt(`unknown magic "${magic}"`);
  const controlLength = readOfft(patch, 8);
  const diffLength = readOfft(patch, 16);
  const newSize = readOfft(patch, 24);
  if (controlLength < 0 || diffLength < 0 || newSize < 0) throw corrupt("negative block length");
  if (32 + controlLength + diffLength > patch.length) throw corrupt("blocks run past the end of the patch");
  if (newSize > maxNewBytes) throw tooLarge(`its header claims a new file of ${newSize} bytes, more than the ${maxNewBytes} allowed`);
  // Every new byte comes from the diff block (added to an old byte) or the extra block: raw blocks must hold newSize bytes.
  if (magic === "BSDIFN40" && newSize > patch.length - 32 - controlLength) throw tooLarge(`its header claims a new file of ${newSize} bytes, but its blocks carry only ${patch.length - 32 - controlLength}`);

  let control = patch.subarray(32, 32 + controlLength);
  let diff = patch.subarray(32 + controlLength, 32 + controlLength + diffLength);
  let extra = patch.subarray(32 + controlLength + diffLength);
  if (magic === "BSDIFF40") {
    // A run is 24 control bytes and makes at least one new byte (a last empty run aside).
    control = bunzip(control, 24 * (newSize + 2), "control");
    diff = bunzip(diff, Math.max(newSize, 1), "diff");
    extra = bunzip(extra, Math.max(newSize, 1), "extra");
  }

  const out = Buffer.alloc(newSize);
  let oldPos = 0;
  let newPos = 0;
  let c = 0;
  let d = 0;
  let e = 0;
  while (newPos < newSize) {
    if (c + 24 > control.length) throw corrupt("control block ends early");
    const add = readOfft(control, c);
    const copy = readOfft(control, c + 8);
    const seek = readOfft(control, c + 16);
    c += 24;
    if (add < 0 || copy < 0) throw corrupt("negative run length");
    if (newPos + add > newSize) throw corrupt("add run past the new file's end");
    if (d + add > diff.length) throw corrupt("diff block ends early");
    for (let i = 0; i < add; i++) {
      const o = oldPos + i;
      out[newPos + i] = (diff[d + i]! + (o >= 0 && o < old.length ? old[o]! : 0)) & 0xff;
    }
    d += add;
    newPos += add;
    oldPos += add;
    if (newPos + copy > newSize) throw corrupt("copy run past the new file's end");
    if (e + copy > extra.length) throw corrupt("extra block ends early");
    extra.copy(out, newPos, e, e + copy);
    e += copy;
    newPos += copy;
    oldPos += seek;
  }
  return out;
}
