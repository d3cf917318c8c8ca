/**
 * Suffix array by induced sorting (SA-IS, Nong, Zhang & Chan 2009), written for
 * bsdiff's matcher. Memory-aware: besides the answer (4 bytes per input byte) it
 * needs one type byte per input byte at the top level; every recursion level
 * keeps its reduced string and its own answer inside the unused half of the
 * caller's array, so the whole sort stays near 5 bytes per input byte
 * (qsufsort, which bsdiff used first, needs 8).
 */
type Text = Uint8Array | Int32Array;

/** One bit per position: set for S-type suffixes, clear for L-type. */
type Types = Uint8Array;

function isS(types: Types, i: number): boolean {
  return (types[i >>> 3]! & (1 << (i & 7))) !== 0;
}

function classify(text: Text, n: number): Types {
  const types = new Uint8Array((n + 7) >>> 3);
  // Position n-1 is L-type: the virtual sentinel after the end is smaller than everything.
  let nextIsS = false;
  for (let i = n - 2; i >= 0; i--) {
    const a = text[i]!;
    const b = text[i + 1]!;
    nextIsS = a < b || (a === b && nextIsS);
    if (nextIsS) types[i >>> 3]! |= 1 << (i & 7);
  }
  return types;
}

function isLms(types: Types, i: number): boolean {
  return i > 0 && isS(types, i) && !isS(types, i - 1);
}

function countSymbols(text: Text, n: number, k: number): Int32Array {
  const counts = new Int32Array(k);
  for (let i = 0; i < n; i++) counts[text[i]!]!++;
  return counts;
}

/** Bucket heads (start = true) or one past the bucket tails. */
function bucketEdges(counts: Int32Array, into: Int32Array, start: boolean): void {
  let sum = 0;
  for (let c = 0; c < counts.length; c++) {
    sum += counts[c]!;
    into[c] = start ? sum - counts[c]! : sum;
  }
}

function induce(text: Text, sa: Int32Array, types: Types, n: number, counts: Int32Array, edges: Int32Array): void {
  bucketEdges(counts, edges, true);
  // The sentinel sorts first; the suffix just before it is L-type.
  sa[edges[text[n - 1]!]!++] = n - 1;
  for (let i = 0; i < n; i++) {
    const j = sa[i]! - 1;
    if (j >= 0 && !isS(types, j)) sa[edges[text[j]!]!++] = j;
  }
  bucketEdges(counts, edges, false);
  for (let i = n - 1; i >= 0; i--) {
    const j = sa[i]! - 1;
    if (j >= 0 && isS(types, j)) sa[--edges[text[j]!]!] = j;
  }
}

function sameLmsSubstring(text: Text, types: Types, n: number, a: number, b: number): boolean {
  for (let d = 0; ; d++) {
    const ea = a + d === n;
    const eb = b + d === n;
    if (ea || eb) return false; // only the sentinel's own substring reaches it
    if (text[a + d] !== text[b + d] || isS(types, a + d) !== isS(types, b + d)) return false;
    if (d > 0 && (isLms(types, a + d) || isLms(types, b + d))) return isLms(types, a + d) && isLms(types, b + d);
  }
}

function sais(text: Text, sa: Int32Array, n: number, k: number): void {
  if (n === 0) return;
  if (n === 1) {
    sa[0] = 0;
    return;
  }
  const types = classify(text, n);
  const counts = countSymbols(text, n, k);
  const edges = new Int32Array(k);

  // Stage 1: sort the LMS substrings by one round of induced sorting.
  sa.fill(-1, 0, n);
  bucketEdges(counts, edges, false);
  for (let i = n - 1; i > 0; i--) if (isLms(types, i)) sa[--edges[text[i]!]!] = i;
  induce(text, sa, types, n, counts, edges);

  // Gather the sorted LMS positions at the front.
  let lmsCount = 0;
  for (let i = 0; i < n; i++) if (isLms(types, sa[i]!)) sa[lmsCount++] = sa[i]!;

  // Name each LMS substring by rank; names go into the free upper part, indexed by position / 2.
  sa.fill(-1, lmsCount, n);
  let names = 0;
  let previous = -1;
  for (let i = 0; i < lmsCount; i++) {
    const p = sa[i]!;
    if (previous < 0 || !sameLmsSubstring(text, types, n, previous, p)) names++;
    previous = p;
    sa[lmsCount + (p >> 1)] = names - 1;
  }
  // Pack the names, in text order, at the very end: that is the reduced string.
  for (let i = n - 1, j = n - 1; i >= lmsCount; i--) if (sa[i]! >= 0) sa[j--] = sa[i]!;

  const reduced = sa.subarray(n - lmsCount, n);
  const reducedSa = sa.subarray(0, lmsCount);
  if (names < lmsCount) {
    sais(reduced, reducedSa, lmsCount, names);
  } else {
    for (let i = 0; i < lmsCount; i++) reducedSa[reduced[i]!] = i;
  }

  // Map ranks back to text positions: reuse the reduced string's slots for the LMS positions.
  for (let i = 1, j = 0; i < n; i++) if (isLms(types, i)) reduced[j++] = i;
  for (let i = 0; i < lmsCount; i++) reducedSa[i] = reduced[reducedSa[i]!]!;
  sa.fill(-1, lmsCount, n);

  // Stage 3: place the sorted LMS suffixes at their bucket tails, then induce the rest.
  bucketEdges(counts, edges, false);
  for (let i = lmsCount - 1; i >= 0; i--) {
    const p = sa[i]!;
    sa[i] = -1;
    sa[--edges[text[p]!]!] = p;
  }
  induce(text, sa, types, n, counts, edges);
}

/** The suffix array of `data`: positions of all its suffixes in lexicographic order. */
export function suffixArray(data: Uint8Array): Int32Array {
  if (data.length >= 0x7fffffff) throw new RangeError("suffixArray: input too large");
  const sa = new Int32Array(data.length);
  sais(data, sa, data.length, 256);
  return sa;
}
