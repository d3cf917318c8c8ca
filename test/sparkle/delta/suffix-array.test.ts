import { describe, expect, it } from "vitest";
import { suffixArray } from "../../../src/sparkle/delta/suffix-array.js";

function naive(data: Buffer): number[] {
  const positions = [...Array(data.length).keys()];
  positions.sort((a, b) => Buffer.compare(data.subarray(a), data.subarray(b)));
  return positions;
}

function seeded(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 4294967296;
  };
}

describe("suffixArray (SA-IS)", () => {
  it("equals a naive sort on 3,000 random short strings over small alphabets (deep recursion)", () => {
    const next = seeded(42);
    for (let t = 0; t < 3000; t++) {
      const n = Math.floor(next() * 80);
      const alphabet = 1 + Math.floor(next() * 4);
      const data = Buffer.alloc(n);
      for (let i = 0; i < n; i++) data[i] = 97 + Math.floor(next() * alphabet);
      expect(Array.from(suffixArray(data)), data.toString()).toEqual(naive(data));
    }
  });

  it("handles empty, one-byte, all-equal and full-alphabet inputs", () => {
    for (const data of [Buffer.alloc(0), Buffer.from([7]), Buffer.alloc(500, 0), Buffer.alloc(500, 255), Buffer.from([...Array(256).keys()].reverse())]) {
      expect(Array.from(suffixArray(data))).toEqual(naive(data));
    }
  });

  it("equals a naive sort on 64 KiB of periodic text with noise", () => {
    const next = seeded(7);
    const data = Buffer.alloc(1 << 16);
    const text = "plugin bridge release update sparkle appcast ";
    for (let i = 0; i < data.length; i++) data[i] = text.charCodeAt(i % text.length) ^ (next() < 0.002 ? 1 : 0);
    const sa = suffixArray(data);
    for (let i = 1; i < sa.length; i++) expect(Buffer.compare(data.subarray(sa[i - 1]), data.subarray(sa[i]))).toBe(-1);
  });
});
