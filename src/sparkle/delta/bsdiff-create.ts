/**
 * Creates a per-file patch in the form Sparkle's vendored bspatch reads:
 * "BSDIFN40" (bsdiff 4 layout with the three blocks stored raw, since the
 * delta container compresses everything anyway).
 *
 *   0   8  "BSDIFN40"
 *   8   8  length of the control block
 *  16   8  length of the diff block
 *  24   8  length of the new file
 *  32   …  control block: triples (add, copy, seek) as 8-byte sign-magnitude integers
 *          diff block: new − old bytes for every "add" run
 *          extra block: literal new bytes for every "copy" run
 *
 * Matching follows Colin Percival's bsdiff: longest exact matches from a suffix
 * array of the old file, grown forwards and backwards while at least half the
 * bytes agree, so code whose pointers moved still diffs to mostly zero bytes.
 */
import { suffixArray } from "./suffix-array.js";

export const BSDIFN40_MAGIC = "BSDIFN40";

/** Writes `value` as bsdiff's 8-byte little-endian sign-magnitude integer. */
export function writeOfft(value: number, into: Buffer, at: number): void {
  let magnitude = BigInt(Math.abs(value));
  for (let i = 0; i < 8; i++) {
    into[at + i] = Number(magnitude & 0xffn);
    magnitude >>= 8n;
  }
  if (value < 0) into[at + 7]! |= 0x80;
}

function matchLength(old: Uint8Array, oldStart: number, neu: Uint8Array, newStart: number): number {
  let i = 0;
  const limit = Math.min(old.length - oldStart, neu.length - newStart);
  while (i < limit && old[oldStart + i] === neu[newStart + i]) i++;
  return i;
}

/** Longest prefix of neu[from…] found in old: binary search over the sorted suffixes. */
function longestMatch(sa: Int32Array, old: Buffer, neu: Buffer, from: number): { length: number; at: number } {
  let lo = 0;
  let hi = sa.length - 1;
  while (hi - lo >= 2) {
    const mid = (lo + hi) >>> 1;
    const p = sa[mid]!;
    const n = Math.min(old.length - p, neu.length - from);
    if (Buffer.compare(old.subarray(p, p + n), neu.subarray(from, from + n)) < 0) lo = mid;
    else hi = mid;
  }
  const a = matchLength(old, sa[lo]!, neu, from);
  const b = hi !== lo ? matchLength(old, sa[hi]!, neu, from) : -1;
  return a >= b ? { length: a, at: sa[lo]! } : { length: b, at: sa[hi]! };
}

/**
 * Builds a BSDIFN40 patch turning `old` into `neu`, as a list of buffers to
 * write in order (the extra block points into `neu`, nothing is copied twice).
 * Peak memory ≈ old + new + 4.2 × old (suffix array and type bits) + new (diff bytes).
 */
export function createBsdiffPatchParts(old: Buffer, neu: Buffer): Buffer[] {
  const sa = old.length > 0 ? suffixArray(old) : new Int32Array(0);
  const control: number[] = [];
  const diff = Buffer.alloc(neu.length);
  let diffLength = 0;
  const extras: Array<[number, number]> = [];

  let scan = 0;
  let length = 0;
  let pos = 0;
  let lastScan = 0;
  let lastPos = 0;
  let lastOffset = 0;
  while (scan < neu.length) {
    let oldScore = 0;
    let scsc = (scan += length);
    for (; scan < neu.length; scan++) {
      if (sa.length > 0) ({ length, at: pos } = longestMatch(sa, old, neu, scan));
      else length = 0;
      for (; scsc < scan + length; scsc++) if (scsc + lastOffset < old.length && old[scsc + lastOffset] === neu[scsc]) oldScore++;
      if ((length === oldScore && length !== 0) || length > oldScore + 8) break;
      if (scan + lastOffset < old.length && old[scan + lastOffset] === neu[scan]) oldScore--;
    }
    if (length === oldScore && scan !== neu.length) continue;

    // Grow the previous match forwards while at least half the bytes agree…
    let lengthF = 0;
    for (let i = 0, s = 0, best = 0; lastScan + i < scan && lastPos + i < old.length; ) {
      if (old[lastPos + i] === neu[lastScan + i]) s++;
      i++;
      if (s * 2 - i > best * 2 - lengthF) {
        best = s;
        lengthF = i;
      }
    }
    // …and the new match backwards.
    let lengthB = 0;
    if (scan < neu.length) {
      for (let i = 1, s = 0, best = 0; scan >= lastScan + i && pos >= i; i++) {
        if (old[pos - i] === neu[scan - i]) s++;
        if (s * 2 - i > best * 2 - lengthB) {
          best = s;
          lengthB = i;
        }
      }
    }
    if (lastScan + lengthF > scan - lengthB) {
      const overlap = lastScan + lengthF - (scan - lengthB);
      let s = 0;
      let best = 0;
      let split = 0;
      for (let i = 0; i < overlap; i++) {
        if (neu[lastScan + lengthF - overlap + i] === old[lastPos + lengthF - overlap + i]) s++;
        if (neu[scan - lengthB + i] === old[pos - lengthB + i]) s--;
        if (s > best) {
          best = s;
          split = i + 1;
        }
      }
      lengthF += split - overlap;
      lengthB -= split;
    }

    for (let i = 0; i < lengthF; i++) diff[diffLength++] = (neu[lastScan + i]! - old[lastPos + i]!) & 0xff;
    const extraStart = lastScan + lengthF;
    const extraEnd = scan - lengthB;
    if (extraEnd > extraStart) extras.push([extraStart, extraEnd]);
    control.push(lengthF, extraEnd - extraStart, pos - lengthB - (lastPos + lengthF));

    lastScan = scan - lengthB;
    lastPos = pos - lengthB;
    lastOffset = pos - scan;
  }

  const header = Buffer.alloc(32);
  header.write(BSDIFN40_MAGIC, 0, "latin1");
  const controlBlock = Buffer.alloc(control.length * 8);
  control.forEach((value, i) => writeOfft(value, controlBlock, i * 8));
  writeOfft(controlBlock.length, header, 8);
  writeOfft(diffLength, header, 16);
  writeOfft(neu.length, header, 24);
  return [header, controlBlock, diff.subarray(0, diffLength), ...extras.map(([start, end]) => neu.subarray(start, end))];
}

/** The same patch as one buffer. */
export function createBsdiffPatch(old: Buffer, neu: Buffer): Buffer {
  return Buffer.concat(createBsdiffPatchParts(old, neu));
}
