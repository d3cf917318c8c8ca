import { crc32 } from "node:zlib";

/** The eight bytes every PNG file starts with (PNG spec, section 5.2). */
export const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/** A page shows the icon at most a few hundred pixels wide; macOS icons stop at 1024 (512@2x). */
export const PNG_MAX_SIDE = 4096;

export interface PngInfo {
  width: number;
  height: number;
}

export function isPng(bytes: Buffer): boolean {
  return bytes.length >= PNG_SIGNATURE.length && bytes.subarray(0, PNG_SIGNATURE.length).equals(PNG_SIGNATURE);
}

/**
 * Reads a PNG's structure without decoding its pixels: the signature, an
 * IHDR chunk first, at least one IDAT, IEND last with nothing after it, and
 * every chunk's CRC. Returns the image's size, or a sentence saying what is
 * wrong. Used where a PNG enters (the bundle's icon) and where it is read
 * back (`verify`), so a truncated or altered image is named, not served.
 */
export function readPng(bytes: Buffer): PngInfo | { problem: string } {
  if (!isPng(bytes)) return { problem: "it does not start with the PNG signature" };
  let at = PNG_SIGNATURE.length;
  let info: PngInfo | undefined;
  let idat = false;
  for (let index = 0; ; index++) {
    if (at + 12 > bytes.length) return { problem: `it ends inside a chunk header at byte ${at} (truncated)` };
    const length = bytes.readUInt32BE(at);
    const type = bytes.subarray(at + 4, at + 8).toString("latin1");
    if (!/^[A-Za-z]{4}$/.test(type)) return { problem: `the chunk at byte ${at} has no valid type` };
    const end = at + 12 + length;
    if (length > 0x7fffffff || end > bytes.length) return { problem: `its ${type} chunk at byte ${at} runs past the end of the file (truncated)` };
    const crc = bytes.readUInt32BE(end - 4);
    if (crc32(bytes.subarray(at + 4, end - 4)) !== crc) return { problem: `the CRC of its ${type} chunk at byte ${at} does not match (the bytes were altered)` };
    if (index === 0) {
      if (type !== "IHDR" || length !== 13) return { problem: "its first chunk is not a 13-byte IHDR" };
      const width = bytes.readUInt32BE(at + 8);
      const height = bytes.readUInt32BE(at + 12);
      if (width === 0 || height === 0 || width > PNG_MAX_SIDE || height > PNG_MAX_SIDE) return { problem: `it is ${width}×${height} pixels (each side must be 1 to ${PNG_MAX_SIDE})` };
      info = { width, height };
    } else if (type === "IHDR") return { problem: "it has a second IHDR chunk" };
    if (type === "IDAT") idat = true;
    at = end;
    if (type === "IEND") {
      if (at !== bytes.length) return { problem: `${bytes.length - at} bytes follow its IEND chunk` };
      if (!idat) return { problem: "it has no image data (IDAT chunk)" };
      return info!;
    }
  }
}
