import { describe, expect, it } from "vitest";
import { compareUtf8 } from "../../src/core/utf8-order.js";
import { ftsOrder } from "../../src/sparkle/delta/tree-hash.js";

const sign = (n: number): number => Math.sign(n);
/** The orders as the byte forms give them: the definition compareUtf8 must agree with. */
const bytewise = (a: string, b: string): number => Buffer.compare(Buffer.from(a, "utf8"), Buffer.from(b, "utf8"));
const ftsBytewise = (a: string, b: string): number => bytewise(a.replaceAll("/", "\0"), b.replaceAll("/", "\0"));

// Names that UTF-16 order and UTF-8 byte order sort differently (a character past U+FFFF against one in
// U+E000..U+FFFF), ASCII neighbours of "/", decomposed and precomposed accents, CR, and prefixes.
const NAMES = ["a", "A", "a.txt", "a/b", "a/b/c", "a-b", "a.b", "a0", "Icon\r", "é", "e\u0301", "\uE000", "\uFFFD", "\uFF21", "😀", "😀/x", "\u{10000}", "日本", "z", "", "/", "a/", "a//"];

describe("compareUtf8", () => {
  it("orders strings as Buffer.compare orders their UTF-8 bytes, surrogate pairs included", () => {
    for (const a of NAMES) for (const b of NAMES) expect([a, b, sign(compareUtf8(a, b))]).toEqual([a, b, sign(bytewise(a, b))]);
  });

  it("with slashFirst (ftsOrder), orders paths as their bytes with / taken as NUL: a folder before its children", () => {
    for (const a of NAMES) for (const b of NAMES) expect([a, b, sign(ftsOrder(a, b))]).toEqual([a, b, sign(ftsBytewise(a, b))]);
    expect(["/a.txt", "/a/b", "/a", "/a-b"].sort(ftsOrder)).toEqual(["/a", "/a/b", "/a-b", "/a.txt"]);
  });
});
