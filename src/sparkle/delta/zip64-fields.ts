/**
 * ZIP64 values as a reader meets them (APPNOTE.TXT §4.5.3, §4.3.14-16): a
 * 32-bit size or offset of 0xffffffff stands for the 64-bit value in the
 * entry's ZIP64 extended information extra field (tag 0x0001), which holds
 * only the values so marked, in the order size, compressed size, local
 * header offset; an end record with a count of 0xffff or a size or offset
 * of 0xffffffff stands for the ZIP64 end record before it.
 */
export const ZIP64_MARK = 0xffffffff;
export const ZIP64_END = 0x06064b50;
export const ZIP64_LOCATOR = 0x07064b50;
const ZIP64_EXTRA_TAG = 0x0001;

export interface WideFields {
  size: number;
  compressedSize: number;
  localHeaderOffset?: number;
}

/** A 64-bit little-endian value as a number, refused past 2^53 (no zip that large exists). */
export function readU64(bytes: Buffer, at: number): number | undefined {
  const value = bytes.readBigUInt64LE(at);
  return value > BigInt(Number.MAX_SAFE_INTEGER) ? undefined : Number(value);
}

/**
 * The fields with their real values: those marked 0xffffffff are read from
 * the ZIP64 extra field in `extra` (a header's extra fields). Answers why not
 * when a marked value has no place in it.
 */
export function widenFields(fields: WideFields, extra: Buffer): WideFields | string {
  const marked = (["size", "compressedSize", "localHeaderOffset"] as const).filter((key) => fields[key] === ZIP64_MARK);
  if (marked.length === 0) return fields;
  for (let at = 0; at + 4 <= extra.length; ) {
    const tag = extra.readUInt16LE(at);
    const length = extra.readUInt16LE(at + 2);
    if (at + 4 + length > extra.length) break;
    if (tag === ZIP64_EXTRA_TAG) {
      if (length < 8 * marked.length) return `its ZIP64 extra field holds ${length / 8} values, ${marked.length} are marked`;
      const out = { ...fields };
      for (const [i, key] of marked.entries()) {
        const value = readU64(extra, at + 4 + 8 * i);
        if (value === undefined) return "a ZIP64 value is past 2^53";
        out[key] = value;
      }
      return out;
    }
    at += 4 + length;
  }
  return "a size or offset is marked ZIP64 but it has no ZIP64 extra field";
}
