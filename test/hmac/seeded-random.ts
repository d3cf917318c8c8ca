/**
 * A small deterministic PRNG (mulberry32) so fuzz failures replay from
 * their seed, with the pickers the HMAC fuzzer needs.
 */
export type Random = {
  next(): number;
  int(maxExclusive: number): number;
  pick<T>(items: readonly T[]): T;
  chance(p: number): boolean;
};

export function seededRandom(seed: number): Random {
  let state = seed >>> 0;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (maxExclusive: number) => Math.floor(next() * maxExclusive);
  return { next, int, pick: (items) => items[int(items.length)]!, chance: (p) => next() < p };
}

/** Characters that stress the grammar: separators, quotes, escapes, controls, non-ASCII, surrogates. */
export const NASTY_CHARS = [
  '"', "\\", ",", " ", "=", "\t", "\n", "\r", "\u0000", "\u0001", "\u007f", "'", ";", ":", "?", "&", "#", "%",
  "é", "\u00a0", "\u2028", "\ufeff", "\ud83d\ude00", "\ud800", "A", "z", "0", "+", "/", "-", "_",
] as const;

export function randomString(random: Random, maxLength: number): string {
  let out = "";
  const length = random.int(maxLength + 1);
  for (let i = 0; i < length; i++) {
    out += random.chance(0.5) ? String.fromCharCode(0x20 + random.int(0x5f)) : random.pick(NASTY_CHARS);
  }
  return out;
}
