import { createInflate } from "node:zlib";

/** The IHDR fields that fix how many bytes the image data inflates to. */
export interface PngLayout {
  width: number;
  height: number;
  bitDepth: number;
  colourType: number;
  interlace: number;
}

/** Samples per pixel of each colour type (PNG spec, table 11.1). */
const CHANNELS: Record<number, number> = { 0: 1, 2: 3, 3: 1, 4: 2, 6: 4 };

/** Adam7's seven passes: first column, first row, column step, row step. */
const ADAM7 = [[0, 0, 8, 8], [4, 0, 8, 8], [0, 4, 4, 8], [2, 0, 4, 4], [0, 2, 2, 4], [1, 0, 2, 2], [0, 1, 1, 2]] as const;

/** The rows of the filtered image data, as [bytes per row including its filter byte, row count], pass by pass. */
export function pngRows(l: PngLayout): Array<[number, number]> {
  const bitsPerPixel = CHANNELS[l.colourType]! * l.bitDepth;
  const row = (width: number): number => 1 + Math.ceil((width * bitsPerPixel) / 8);
  if (l.interlace === 0) return [[row(l.width), l.height]];
  return ADAM7.map(([x0, y0, dx, dy]): [number, number] => {
    const w = l.width > x0 ? Math.ceil((l.width - x0) / dx) : 0;
    const h = l.height > y0 ? Math.ceil((l.height - y0) / dy) : 0;
    return w === 0 || h === 0 ? [0, 0] : [row(w), h];
  }).filter(([, h]) => h > 0);
}

/**
 * Inflates a PNG's concatenated IDAT data and checks it is exactly the
 * filtered image the header promises: a valid zlib stream (its checksum
 * included), each row starting with a filter type 0-4, and exactly as many
 * bytes as the rows need, no fewer and no more. The inflated bytes are
 * counted as they stream and never kept: memory stays at zlib's window and
 * one 64 KiB chunk, and the work is bounded by the side limit (a 4096×4096
 * 16-bit RGBA image, the largest accepted, inflates to 128 MiB). The
 * inflate stops as soon as the data runs past what the rows need, so a
 * zlib bomb costs no more than a genuine image.
 */
export function checkPngPixels(idat: Buffer, layout: PngLayout): Promise<string | undefined> {
  const rows = pngRows(layout);
  const expected = rows.reduce((n, [bytes, count]) => n + bytes * count, 0);
  return new Promise((resolve) => {
    const inflate = createInflate({ chunkSize: 64 * 1024 });
    let seen = 0;
    let segment = 0;
    let rowLeft = rows[0]?.[1] ?? 0;
    let nextRowAt = 0; // offset of the next filter byte
    let settled = false;
    const finish = (problem: string | undefined): void => {
      if (settled) return;
      settled = true;
      inflate.destroy();
      resolve(problem);
    };
    inflate.on("data", (chunk: Buffer) => {
      if (seen + chunk.length > expected) return finish(`its image data inflates to more than the ${expected} bytes a ${layout.width}×${layout.height} image of its kind holds`);
      while (segment < rows.length && nextRowAt < seen + chunk.length) {
        const filter = chunk[nextRowAt - seen]!;
        if (filter > 4) return finish(`a row of its image data has filter type ${filter} (0 to 4 exist)`);
        nextRowAt += rows[segment]![0];
        if (--rowLeft === 0 && ++segment < rows.length) rowLeft = rows[segment]![1];
      }
      seen += chunk.length;
    });
    inflate.on("error", (err) => finish(`its image data is not a valid zlib stream (${err.message})`));
    inflate.on("end", () => finish(seen === expected ? undefined : `its image data inflates to ${seen} bytes; a ${layout.width}×${layout.height} image of its kind needs ${expected}`));
    inflate.end(idat);
  });
}

/** Whether a bit depth goes with a colour type (PNG spec, table 11.1). */
export function validDepth(colourType: number, bitDepth: number): boolean {
  const allowed: Record<number, number[]> = { 0: [1, 2, 4, 8, 16], 2: [8, 16], 3: [1, 2, 4, 8], 4: [8, 16], 6: [8, 16] };
  return allowed[colourType]?.includes(bitDepth) ?? false;
}
