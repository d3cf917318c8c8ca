import { describe, expect, it } from "vitest";
import { centralHeader, endRecords, localHeader, type EntryFields } from "../../../src/steps/zip/zip-format.js";

/** The thresholds exactly: a value that would read as the ZIP64 mark (0xffff, 0xffffffff) is already written as ZIP64. */
const entry = (over: Partial<EntryFields>): EntryFields => ({ name: Buffer.from("A.bundle/f"), method: 0, crc32: 0, compressedSize: 10, size: 10, mode: 0o100644, localHeaderOffset: 0, zip64Local: false, ...over });
const extraOf = (header: Buffer, fixed: number, nameLength: number): Buffer => header.subarray(fixed + nameLength);

describe("ZIP64 fields at their thresholds", () => {
  it("65,534 entries end classic; 65,535 (whose count would read as the ZIP64 mark) get the ZIP64 end record and locator", () => {
    expect(endRecords(65_534, 100, 200)).toHaveLength(22);
    const wide = endRecords(65_535, 100, 200);
    expect(wide).toHaveLength(56 + 20 + 22);
    expect(wide.readUInt32LE(0)).toBe(0x06064b50);
    expect(wide.readBigUInt64LE(32)).toBe(65_535n);
    expect(wide.readUInt32LE(56)).toBe(0x07064b50);
    expect(wide.readBigUInt64LE(56 + 8)).toBe(300n); // the ZIP64 end record starts where the central directory ends
    expect(wide.readUInt16LE(76 + 10)).toBe(0xffff);
    // Only the overflowing classic field is all ones.
    expect(wide.readUInt32LE(76 + 12)).toBe(100);
    expect(wide.readUInt32LE(76 + 16)).toBe(200);
  });

  it("a central directory at 0xfffffffe ends classic; at 0xffffffff it needs ZIP64", () => {
    expect(endRecords(3, 100, 0xfffffffe)).toHaveLength(22);
    const wide = endRecords(3, 100, 0xffffffff);
    expect(wide.readBigUInt64LE(48)).toBe(0xffffffffn);
    expect(wide.readUInt16LE(76 + 10)).toBe(3);
    expect(wide.readUInt32LE(76 + 16)).toBe(0xffffffff);
  });

  it("a central entry carries in its extra field only the values that do not fit, in APPNOTE's order", () => {
    expect(centralHeader(entry({ localHeaderOffset: 0xfffffffe }))).toHaveLength(46 + 10);
    const offsetOnly = centralHeader(entry({ localHeaderOffset: 5 * 2 ** 30 }));
    expect(offsetOnly.readUInt32LE(42)).toBe(0xffffffff);
    expect(offsetOnly.readUInt32LE(24)).toBe(10);
    expect(offsetOnly.readUInt16LE(6)).toBe(45);
    const extra = extraOf(offsetOnly, 46, 10);
    expect([extra.readUInt16LE(0), extra.readUInt16LE(2), Number(extra.readBigUInt64LE(4))]).toEqual([1, 8, 5 * 2 ** 30]);
    const all = extraOf(centralHeader(entry({ size: 2 ** 33, compressedSize: 2 ** 33, localHeaderOffset: 2 ** 32, zip64Local: true })), 46, 10);
    expect([all.readUInt16LE(2), all.readBigUInt64LE(4), all.readBigUInt64LE(12), all.readBigUInt64LE(20)]).toEqual([24, 2n ** 33n, 2n ** 33n, 2n ** 32n]);
  });

  it("a local header gets the ZIP64 extra (both sizes) only for a file listed at 0xffffffff bytes or more", () => {
    expect(localHeader(entry({}))).toHaveLength(30 + 10);
    const big = localHeader(entry({ size: 0xffffffff, compressedSize: 0xffffffff, zip64Local: true }));
    expect([big.readUInt16LE(4), big.readUInt32LE(18), big.readUInt32LE(22), big.readUInt16LE(28)]).toEqual([45, 0xffffffff, 0xffffffff, 20]);
    expect([big.readBigUInt64LE(40 + 4), big.readBigUInt64LE(40 + 12)]).toEqual([0xffffffffn, 0xffffffffn]);
    // A file that starts past 4 GiB but is small: no local extra, version 4.5 (the entry is a ZIP64 entry).
    const late = localHeader(entry({ localHeaderOffset: 2 ** 32 }));
    expect([late.length, late.readUInt16LE(4), late.readUInt16LE(28)]).toEqual([40, 45, 0]);
  });
});
