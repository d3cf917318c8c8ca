/**
 * Sparkle's default ordering of `sparkle:version` strings, written from a
 * reading of SUStandardVersionComparator.m (Sparkle 2) so relcast ranks
 * builds exactly as installed copies do. In short:
 *
 * - A version is split into runs of digits, runs of other characters, and
 *   single separators (".", punctuation, white space). Everything from the
 *   first "-" after the first character on is ignored (`1.5.5-335d3e2`).
 * - The leading number-and-period parts of both sides are padded with ".0"
 *   to the same length, so `1.0 == 1.0.0` and `1.0b1 == 1.0.0b1`.
 * - Parts are compared pairwise: numbers numerically, words by code unit;
 *   a number beats a word (`1.0 > 1.0b1`), a number beats a separator.
 * - When one side runs out, a trailing word makes the longer side older
 *   (`1.0rc < 1.0`), a trailing number makes it newer (`0.1 < 0.1.2`).
 */
export type Ordering = -1 | 0 | 1;

type Kind = "number" | "word" | "period" | "punctuation" | "space" | "dash";

const MAX_LONG_LONG = (1n << 63n) - 1n;

function kindOf(char: string): Kind {
  if (char === ".") return "period";
  if (char === "-") return "dash";
  if (/^\p{Nd}$/u.test(char)) return "number";
  // NSCharacterSet.whitespaceAndNewlineCharacterSet: Unicode Z* plus U+0009–U+000D and U+0085.
  if (/^[\p{Z}\t\n\v\f\r\u0085]$/u.test(char)) return "space";
  if (/^\p{P}$/u.test(char)) return "punctuation";
  return "word";
}

function isSeparator(kind: Kind): boolean {
  return kind === "period" || kind === "punctuation" || kind === "space";
}

/** Separators of any flavour count as one class when two parts are compared. */
function sameClass(a: Kind, b: Kind): boolean {
  return isSeparator(a) ? isSeparator(b) : a === b;
}

/** Splits into parts; a part's kind is the kind of its first character. */
export function splitVersion(version: string): string[] {
  const parts: string[] = [];
  if (version.length === 0) return parts;
  let current = version[0]!;
  let previous = kindOf(current);
  for (let i = 1; i < version.length; i++) {
    const char = version[i]!;
    const kind = kindOf(char);
    if (kind === "dash") break;
    if (kind !== previous || isSeparator(previous)) {
      parts.push(current);
      current = char;
    } else {
      current += char;
    }
    previous = kind;
  }
  parts.push(current);
  return parts;
}

function partKind(part: string): Kind {
  return kindOf(part[0]!);
}

function leadingNumberAndPeriodCount(parts: readonly string[]): number {
  let count = 0;
  for (const part of parts) {
    const kind = partKind(part);
    if (kind !== "number" && kind !== "period") break;
    count++;
  }
  return count;
}

/** Pads the shorter leading numeric run with ".0" pieces taken from the longer one. */
function balance(a: string[], b: string[]): void {
  const countA = leadingNumberAndPeriodCount(a);
  const countB = leadingNumberAndPeriodCount(b);
  const [longer, shorter, from, to] = countA > countB ? [a, b, countB, countA] : [b, a, countA, countB];
  for (let i = from; i < to; i++) shorter.splice(i, 0, partKind(longer[i]!) === "period" ? "." : "0");
}

/** `longLongValue`: the leading ASCII digits, saturated at the 64-bit maximum. */
function numericValue(part: string): bigint {
  const digits = /^[0-9]*/.exec(part)![0];
  if (digits.length === 0) return 0n;
  const value = BigInt(digits);
  return value > MAX_LONG_LONG ? MAX_LONG_LONG : value;
}

function sign(n: number | bigint): Ordering {
  return n > 0 ? 1 : n < 0 ? -1 : 0;
}

/** -1 when `a` is older than `b`, 1 when newer, 0 when Sparkle treats them as the same version. */
const PLAIN_NUMBER = /^\d{1,15}$/;

export function compareSparkleVersions(a: string, b: string): Ordering {
  // Fast path for the usual build numbers: one numeric part each compares as numbers.
  if (PLAIN_NUMBER.test(a) && PLAIN_NUMBER.test(b)) {
    const d = Number(a) - Number(b);
    return d < 0 ? -1 : d > 0 ? 1 : 0;
  }
  const partsA = splitVersion(a);
  const partsB = splitVersion(b);
  balance(partsA, partsB);
  const n = Math.min(partsA.length, partsB.length);
  for (let i = 0; i < n; i++) {
    const pa = partsA[i]!;
    const pb = partsB[i]!;
    const ka = partKind(pa);
    const kb = partKind(pb);
    if (sameClass(ka, kb)) {
      if (ka === "number") {
        const diff = sign(numericValue(pa) - numericValue(pb));
        if (diff !== 0) return diff;
      } else if (ka === "word") {
        if (pa !== pb) return pa < pb ? -1 : 1;
      }
      continue;
    }
    if (kb === "word") return 1;
    if (ka === "word") return -1;
    return ka === "number" ? 1 : -1;
  }
  if (partsA.length === partsB.length) return 0;
  const longerIsA = partsA.length > partsB.length;
  const extra = (longerIsA ? partsA : partsB)[n]!;
  const longerIsNewer = partKind(extra) !== "word";
  return (longerIsA === longerIsNewer ? 1 : -1) as Ordering;
}
