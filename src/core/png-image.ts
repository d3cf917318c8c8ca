import { crc32 } from "node:zlib";
import { checkPngPixels, validDepth, type PngLayout } from "./png-pixels.js";

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

/** The critical chunks a PNG decoder knows (PNG spec, section 11.2); any other critical one makes decoders refuse the image. */
const KNOWN_CRITICAL = new Set(["IHDR", "PLTE", "IDAT", "IEND"]);

/** What IHDR says about the pixels, or why it says nothing a decoder accepts. */
function readHeader(bytes: Buffer, at: number): PngLayout | { problem: string } {
  const width = bytes.readUInt32BE(at + 8);
  const height = bytes.readUInt32BE(at + 12);
  const [bitDepth, colourType, compression, filter, interlace] = bytes.subarray(at + 16, at + 21);
  if (width === 0 || height === 0 || width > PNG_MAX_SIDE || height > PNG_MAX_SIDE) return { problem: `it is ${width}×${height} pixels (each side must be 1 to ${PNG_MAX_SIDE})` };
  if (!validDepth(colourType!, bitDepth!)) return { problem: `its header gives colour type ${colourType} with bit depth ${bitDepth}, which no PNG decoder accepts` };
  if (compression !== 0 || filter !== 0) return { problem: `its header gives compression method ${compression} and filter method ${filter} (only 0 exists)` };
  if (interlace !== 0 && interlace !== 1) return { problem: `its header gives interlace method ${interlace} (0 or 1 exist)` };
  return { width, height, bitDepth: bitDepth!, colourType: colourType!, interlace };
}

/**
 * Reads and checks a PNG the way a browser decodes it, short of keeping its
 * pixels: the signature, an IHDR first whose fields a decoder accepts
 * (a bit depth that goes with the colour type, compression and filter 0,
 * interlace 0 or 1), no critical chunk a decoder does not know, a PLTE
 * before the image data when the image is indexed, consecutive IDAT
 * chunks, IEND last with nothing after it, every chunk's CRC, and image
 * data that inflates to exactly the rows the header promises
 * ({@link checkPngPixels}). Returns the image's size, or a sentence saying
 * what is wrong. Used where a PNG enters (the bundle's icon) and where it
 * is read back (`verify`), so an image a page could not show is named, not
 * served.
 */
export async function readPng(bytes: Buffer): Promise<PngInfo | { problem: string }> {
  if (!isPng(bytes)) return { problem: "it does not start with the PNG signature" };
  let at = PNG_SIGNATURE.length;
  let layout: PngLayout | undefined;
  let palette = false;
  const idat: Buffer[] = [];
  let idatEnded = false;
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
      const header = readHeader(bytes, at);
      if ("problem" in header) return header;
      layout = header;
    } else if (type === "IHDR") return { problem: "it has a second IHDR chunk" };
    else if (/^[A-Z]/.test(type) && !KNOWN_CRITICAL.has(type)) return { problem: `it has a critical chunk ${type} that no PNG decoder knows` };
    if (type === "PLTE") {
      if (idat.length > 0 || palette) return { problem: "its PLTE chunk is not the only one before the image data" };
      if (length === 0 || length % 3 !== 0 || length > 256 * 3) return { problem: `its PLTE chunk is ${length} bytes (1 to 256 three-byte entries)` };
      palette = true;
    }
    if (type === "IDAT") {
      if (idatEnded) return { problem: "its IDAT chunks are not consecutive" };
      if (layout!.colourType === 3 && !palette) return { problem: "it is an indexed-colour image with no PLTE chunk before its image data" };
      idat.push(bytes.subarray(at + 8, end - 4));
    } else if (idat.length > 0) idatEnded = true;
    at = end;
    if (type === "IEND") {
      if (at !== bytes.length) return { problem: `${bytes.length - at} bytes follow its IEND chunk` };
      if (idat.length === 0) return { problem: "it has no image data (IDAT chunk)" };
      const pixels = await checkPngPixels(Buffer.concat(idat), layout!);
      if (pixels) return { problem: pixels };
      return { width: layout!.width, height: layout!.height };
    }
  }
}
