/**
 * Byte-wise (strcmp) order of two strings' UTF-8 forms, worked out on the
 * strings themselves: no Buffer per comparison. Sorting 70,000 paths makes
 * about a million comparisons, and two Buffers (and two strings) each made
 * hundreds of megabytes of garbage in one synchronous stretch, which V8 met
 * by growing its heap. UTF-8 byte order is code point order; UTF-16 code
 * units agree with it except that a surrogate (a code point above U+FFFF)
 * must sort after U+E000..U+FFFF, hence the fix-up below. A lone surrogate
 * (not valid Unicode, and no file name relcast accepts) is taken as is.
 *
 * `slashFirst`: "/" sorts before every other character (as "\0" would), the
 * order of a folder walk where a parent comes before its children.
 */
export function compareUtf8(a: string, b: string, slashFirst = false): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    let x = a.charCodeAt(i);
    let y = b.charCodeAt(i);
    if (x === y) continue;
    if (slashFirst) {
      if (x === 0x2f) x = 0;
      if (y === 0x2f) y = 0;
      if (x === y) continue;
    }
    if (x >= 0xd800 && y >= 0xd800) {
      x += x >= 0xe000 ? -0x800 : 0x2000;
      y += y >= 0xe000 ? -0x800 : 0x2000;
    }
    return x - y;
  }
  return a.length - b.length;
}
