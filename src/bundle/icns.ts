import { isPng, readPng, type PngInfo } from "../core/png-image.js";

/** One image of an .icns file that is a PNG, with the type of the element that holds it. */
export interface IcnsPng extends PngInfo {
  type: string;
  png: Buffer;
}

export type IcnsReading = { images: IcnsPng[]; types: string[] } | { problem: string };

const HEADER = 8;

/**
 * The images of an Apple icon file (.icns). The file is a big-endian
 * container: the magic `icns` and the file's length, then elements, each a
 * four-character type, a length that counts its own 8-byte header, and
 * data. Since macOS 10.7 the large sizes (`ic07` 128, `ic08` 256, `ic09`
 * 512, `ic10` 1024, `ic11`–`ic14` the @2x sizes) hold a PNG, or JPEG 2000,
 * and the small legacy ones (`is32`, `il32`, `it32`, masks) raw pixels; the
 * PNGs are recognised by their signature, whatever the type, and checked.
 * A length that leaves the file, or a PNG that does not parse, is a problem.
 */
export function readIcns(bytes: Buffer): IcnsReading {
  if (bytes.length < HEADER || bytes.subarray(0, 4).toString("latin1") !== "icns") return { problem: "it does not start with the .icns magic \"icns\"" };
  const declared = bytes.readUInt32BE(4);
  if (declared < HEADER || declared > bytes.length) return { problem: `its header says ${declared} bytes, but the file has ${bytes.length}` };
  const images: IcnsPng[] = [];
  const types: string[] = [];
  for (let at = HEADER; at < declared; ) {
    if (at + HEADER > declared) return { problem: `it ends inside an element header at byte ${at}` };
    const type = bytes.subarray(at, at + 4).toString("latin1");
    const length = bytes.readUInt32BE(at + 4);
    if (length < HEADER || at + length > declared) return { problem: `its element ${JSON.stringify(type)} at byte ${at} says ${length} bytes, which do not fit in the file` };
    types.push(type);
    const data = bytes.subarray(at + HEADER, at + length);
    if (isPng(data)) {
      const png = readPng(data);
      if ("problem" in png) return { problem: `the PNG in its ${JSON.stringify(type)} element is broken: ${png.problem}` };
      images.push({ type, png: Buffer.from(data), ...png });
    }
    at += length;
  }
  return { images, types };
}

/** The PNG with the most pixels (the first of equal ones), or undefined when the file holds none. */
export function largestPng(images: readonly IcnsPng[]): IcnsPng | undefined {
  let best: IcnsPng | undefined;
  for (const image of images) if (!best || image.width * image.height > best.width * best.height) best = image;
  return best;
}
