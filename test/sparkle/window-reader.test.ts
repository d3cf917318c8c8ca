/**
 * The one yauzl adapter for zips read by range (sparkle/window-reader.ts),
 * as both its users call it: the entry listing (zip-listing.ts) and the
 * stored zip's central directory (delta/zip-directory.ts). Zips are written
 * by Python's zipfile, and the listings compared with Python's own.
 */
import { execFileSync } from "node:child_process";
import { mkdtemp, readFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { Readable } from "node:stream";
import { beforeAll, describe, expect, it } from "vitest";
import { readZipListing } from "../../src/sparkle/zip-listing.js";
import { readZipDirectory } from "../../src/sparkle/delta/zip-directory.js";
import { WindowReader } from "../../src/sparkle/window-reader.js";

const PY_ZIP = `
import sys, zipfile, random
random.seed(7)
with zipfile.ZipFile(sys.argv[1], "w", zipfile.ZIP_DEFLATED) as z:
    for i in range(int(sys.argv[2])):
        info = zipfile.ZipInfo(f"P.bundle/Contents/Resources/file-{i:05d}.txt", (1980, 1, 1, 0, 0, 0))
        info.create_system = 3
        info.external_attr = 0o100644 << 16
        z.writestr(info, random.randbytes(int(sys.argv[3])))
`;
const PY_LIST = `
import sys, zipfile, json
print(json.dumps([[i.filename, i.file_size, i.CRC] for i in zipfile.ZipFile(sys.argv[1]).infolist()]))
`;

let zip: Buffer;
let expected: Array<[string, number, number]>;

beforeAll(async () => {
  const dir = await mkdtemp(path.join(os.tmpdir(), "window-reader-"));
  const file = path.join(dir, "many.zip");
  // 3,000 entries of 600 random bytes: a directory of ~200 KB, entries spread over ~2 MB.
  execFileSync("python3", ["-c", PY_ZIP, file, "3000", "600"]);
  zip = await readFile(file);
  expected = JSON.parse(execFileSync("python3", ["-c", PY_LIST, file], { encoding: "utf8" }));
});

describe("the shared window reader", () => {
  it("lists every entry of a range source as Python does, in a few fetches, and streams a wanted entry's bytes", async () => {
    const fetches: Array<[number, number]> = [];
    const source = { size: zip.length, openRange: async (start: number, end: number) => (fetches.push([start, end]), Readable.from([zip.subarray(start, end)])) };
    const wanted = "P.bundle/Contents/Resources/file-01234.txt";
    const listing = await readZipListing(source, (name) => name === wanted);
    expect(listing.entries.map((e) => [e.name, e.size])).toEqual(expected.map(([n, s]) => [n, s]));
    expect(listing.files.get(wanted)?.length).toBe(600);
    // 6,000 small reads of the directory (two per entry) become a handful of windows, never one request each.
    expect(fetches.length).toBeLessThan(20);
    for (const [start, end] of fetches) expect(end).toBeLessThanOrEqual(zip.length), expect(start).toBeGreaterThanOrEqual(0);
  });

  it("reads a stored zip's central directory (CRC-32s and sizes as Python reads them) in at most two fetches", async () => {
    const fetches: Array<[number, number]> = [];
    const readRange = async (start: number, end: number) => (fetches.push([start, end]), zip.subarray(start, end + 1));
    const dir = await readZipDirectory(readRange, zip.length, "many.zip");
    expect(Array.from({ length: dir.length }, (_, i) => [dir.name(i), dir.size(i)])).toEqual(expected.map(([n, s]) => [n, s]));
    const crcs = new Map(expected.map(([n, , c]) => [n, c]));
    for (let i = 0; i < dir.length; i++) expect(dir.crc32(i)).toBe(crcs.get(dir.name(i)));
    expect(fetches.length).toBeLessThanOrEqual(2);
  });

  it("a fetch that fails is not kept: the next read of the same bytes asks again", async () => {
    let calls = 0;
    const reader = new WindowReader({ size: zip.length, fetch: async (start, end) => {
      calls += 1;
      if (calls === 1) throw new Error("connection reset");
      return zip.subarray(start, end);
    } }, { windowBytes: 4096, keptWindows: 2 });
    await expect(reader.bytes(100, 200)).rejects.toThrow(/connection reset/);
    expect(await reader.bytes(100, 200)).toEqual(zip.subarray(100, 200));
    expect(await reader.bytes(150, 250)).toEqual(zip.subarray(150, 250));
    expect(calls).toBe(2);
  });

  it("a source that returns fewer bytes than asked is an error, not a short directory", async () => {
    const readRange = async (start: number, end: number) => zip.subarray(start, Math.max(start, end - 10));
    await expect(readZipDirectory(readRange, zip.length, "many.zip")).rejects.toThrow(/returned \d+ bytes/);
  });
});
