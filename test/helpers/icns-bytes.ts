import { readFileSync } from "node:fs";
import path from "node:path";
import { REPO_ROOT } from "./run-cli.js";

/** Real PNG images made by Chromium's encoder (test/fixtures/icon-*.png): 256×256 and 64×64. */
export const ICON_256 = readFileSync(path.join(REPO_ROOT, "test/fixtures/icon-256.png"));
export const ICON_64 = readFileSync(path.join(REPO_ROOT, "test/fixtures/icon-64.png"));

/**
 * An .icns file as iconutil lays one out: the magic, the total length, then
 * elements (type, length counting the 8-byte header, data), all big-endian.
 */
export function icnsFile(elements: Array<{ type: string; data: Buffer }>): Buffer {
  const parts = elements.map(({ type, data }) => {
    const head = Buffer.alloc(8);
    head.write(type, 0, 4, "latin1");
    head.writeUInt32BE(data.length + 8, 4);
    return Buffer.concat([head, data]);
  });
  const head = Buffer.alloc(8);
  head.write("icns", 0, 4, "latin1");
  head.writeUInt32BE(8 + parts.reduce((n, p) => n + p.length, 0), 4);
  return Buffer.concat([head, ...parts]);
}

/** A typical modern .icns: a table of contents, a legacy raw 16×16 image, and PNGs at 64 (ic12) and 256 (ic08). */
export function typicalIcns(): Buffer {
  const toc = Buffer.alloc(24);
  ["is32", "ic12", "ic08"].forEach((t, i) => toc.write(t, i * 8, 4, "latin1"));
  return icnsFile([
    { type: "TOC ", data: toc },
    { type: "is32", data: Buffer.alloc(16 * 16 * 3, 0x7f) },
    { type: "ic12", data: ICON_64 },
    { type: "ic08", data: ICON_256 },
  ]);
}
