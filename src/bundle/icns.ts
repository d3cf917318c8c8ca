import { isPng, readPng, type PngInfo } from "../core/png-image.js";

/** One image of an .icns file that is a PNG, with the type of the element that holds it. */
export interface IcnsPng extends PngInfo {
  type: string;
  png: Buffer;
}

/** A PNG element a decoder could not show, and why. */
export interface BrokenPng {
  type: string;
  problem: string;
}

export interface IcnsContents {
  /** The PNG images that decode. */
  images: IcnsPng[];
  /** The PNG elements that do not decode (a page would show nothing). */
  broken: BrokenPng[];
  /** Each element type once, in file order, with how many elements have it. */
  types: string[];
  counts: Map<string, number>;
}

export type IcnsReading = IcnsContents | { problem: string };

const HEADER = 8;

/** iconutil writes one element per size and a table of contents: about twenty at most; far more is not an icon. */
export const ICNS_MAX_ELEMENTS = 256;

/**
 * The images of an Apple icon file (.icns). The file is a big-endian
 * container: the magic `icns` and the file's length, then elements, each a
 * four-character type, a length that counts its own 8-byte header, and
 * data. Since macOS 10.7 the large sizes (`ic07` 128, `ic08` 256, `ic09`
 * 512, `ic10` 1024, `ic11`–`ic14` the @2x sizes) hold a PNG, or JPEG 2000,
 * and the small legacy ones (`is32`, `il32`, `it32`, masks) raw pixels; the
 * PNGs are recognised by their signature, whatever the type, and decoded
 * as a browser would ({@link readPng}): those that fail are listed in
 * `broken`, not dropped silently. A length that leaves the file, or more
 * than {@link ICNS_MAX_ELEMENTS} elements, is a problem.
 */
export async function readIcns(bytes: Buffer): Promise<IcnsReading> {
  if (bytes.length < HEADER || bytes.subarray(0, 4).toString("latin1") !== "icns") return { problem: "it does not start with the .icns magic \"icns\"" };
  const declared = bytes.readUInt32BE(4);
  if (declared < HEADER || declared > bytes.length) return { problem: `its header says ${declared} bytes, but the file has ${bytes.length}` };
  const found: IcnsContents = { images: [], broken: [], types: [], counts: new Map() };
  let elements = 0;
  for (let at = HEADER; at < declared; ) {
    if (++elements > ICNS_MAX_ELEMENTS) return { problem: `it has more than ${ICNS_MAX_ELEMENTS} elements (an icon file has one per size, a few dozen at most)` };
    if (at + HEADER > declared) return { problem: `it ends inside an element header at byte ${at}` };
    const type = bytes.subarray(at, at + 4).toString("latin1");
    const length = bytes.readUInt32BE(at + 4);
    if (length < HEADER || at + length > declared) return { problem: `its element ${JSON.stringify(type)} at byte ${at} says ${length} bytes, which do not fit in the file` };
    if (!found.counts.has(type)) found.types.push(type);
    found.counts.set(type, (found.counts.get(type) ?? 0) + 1);
    const data = bytes.subarray(at + HEADER, at + length);
    if (isPng(data)) {
      const png = await readPng(data);
      if ("problem" in png) found.broken.push({ type, problem: png.problem });
      else found.images.push({ type, png: Buffer.from(data), ...png });
    }
    at += length;
  }
  return found;
}

/** The element types for a message: each once with its count, the first few only. */
export function describeTypes(contents: Pick<IcnsContents, "types" | "counts">, shown = 12): string {
  if (contents.types.length === 0) return "none";
  const listed = contents.types.slice(0, shown).map((t) => {
    const n = contents.counts.get(t) ?? 1;
    const name = /^[\x20-\x7e]{4}$/.test(t) ? t.trimEnd() || JSON.stringify(t) : JSON.stringify(t);
    return n > 1 ? `${name} ×${n}` : name;
  });
  const more = contents.types.length - listed.length;
  return listed.join(", ") + (more > 0 ? ` and ${more} more type${more === 1 ? "" : "s"}` : "");
}

/**
 * The PNG with the most pixels (the first of equal ones) among the images
 * that decode, or undefined when there is none. {@link readIcns} keeps a
 * PNG that does not decode out of `images`, so a broken larger one is never
 * chosen over a good smaller one.
 */
export function largestPng(images: readonly IcnsPng[]): IcnsPng | undefined {
  let best: IcnsPng | undefined;
  for (const image of images) if (!best || image.width * image.height > best.width * best.height) best = image;
  return best;
}
