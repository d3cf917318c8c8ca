import { crc32, deflateSync } from "node:zlib";
import { PNG_SIGNATURE } from "../../src/core/png-image.js";

/** One PNG chunk: length, type, data and the CRC over type and data, so only what the test means to break is broken. */
export function pngChunk(type: string, data: Buffer = Buffer.alloc(0)): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(data.length, 0);
  head.write(type, 4, 4, "latin1");
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(Buffer.concat([head.subarray(4), data])), 0);
  return Buffer.concat([head, data, crc]);
}

export interface HeaderFields { width: number; height: number; bitDepth?: number; colourType?: number; compression?: number; filter?: number; interlace?: number }

export function ihdr(h: HeaderFields): Buffer {
  const data = Buffer.alloc(13);
  data.writeUInt32BE(h.width, 0);
  data.writeUInt32BE(h.height, 4);
  data.set([h.bitDepth ?? 8, h.colourType ?? 6, h.compression ?? 0, h.filter ?? 0, h.interlace ?? 0], 8);
  return pngChunk("IHDR", data);
}

/** A PNG from its chunks after the signature (IEND added). */
export function pngOf(...chunks: Buffer[]): Buffer {
  return Buffer.concat([PNG_SIGNATURE, ...chunks, pngChunk("IEND")]);
}

/** A valid non-interlaced RGBA8 image of the given size: each row a filter byte 0 then grey pixels. */
export function rgbaPng(width: number, height: number): Buffer {
  return pngOf(ihdr({ width, height }), pngChunk("IDAT", deflateSync(Buffer.alloc(height * (1 + width * 4), 0))));
}
