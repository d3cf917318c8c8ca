import { execFileSync } from "node:child_process";
import { mkdir, mkdtemp, symlink, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { readBundleIcon } from "../../src/bundle/bundle-icon.js";
import { largestPng, readIcns } from "../../src/bundle/icns.js";
import { readPng } from "../../src/core/png-image.js";
import { RelcastError } from "../../src/core/errors.js";
import { ICON_256, ICON_64, icnsFile, typicalIcns } from "../helpers/icns-bytes.js";
import { ihdr, pngChunk, pngOf, rgbaPng } from "../helpers/png-bytes.js";
import { deflateSync } from "node:zlib";
import { ICNS_MAX_ELEMENTS } from "../../src/bundle/icns.js";

async function bundleWith(files: Record<string, Buffer>): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), "relcast-icns-"));
  const app = path.join(dir, "Icon.bundle");
  await mkdir(path.join(app, "Contents", "Resources"), { recursive: true });
  for (const [name, bytes] of Object.entries(files)) await writeFile(path.join(app, "Contents", "Resources", name), bytes);
  return app;
}

async function refusal(promise: Promise<unknown>): Promise<RelcastError> {
  const err = await promise.then(() => undefined, (e: unknown) => e);
  expect(err).toBeInstanceOf(RelcastError);
  return err as RelcastError;
}

describe(".icns reader", () => {
  it("finds every PNG element and picks the largest, byte for byte; `file` reads the result as the 256×256 PNG", async () => {
    const reading = await readIcns(typicalIcns());
    if ("problem" in reading) throw new Error(reading.problem);
    expect(reading.types).toEqual(["TOC ", "is32", "ic12", "ic08"]);
    expect(reading.images.map((i) => [i.type, i.width, i.height])).toEqual([["ic12", 64, 64], ["ic08", 256, 256]]);
    const best = largestPng(reading.images)!;
    expect(best.png.equals(ICON_256)).toBe(true);
    const out = path.join(await mkdtemp(path.join(os.tmpdir(), "relcast-icns-")), "icon.png");
    await writeFile(out, best.png);
    expect(execFileSync("file", ["-b", out], { encoding: "utf8" })).toMatch(/^PNG image data, 256 x 256/);
    // Whatever the order of the elements.
    const reversed = await readIcns(icnsFile([{ type: "ic08", data: ICON_256 }, { type: "ic12", data: ICON_64 }]));
    expect("images" in reversed && largestPng(reversed.images)?.type).toBe("ic08");
  });

  it("an icon of only legacy or JPEG 2000 images has no PNG; broken containers and images are named", async () => {
    const jp2 = Buffer.from("0000000c6a5020200d0a870a", "hex");
    const legacy = await readIcns(icnsFile([{ type: "is32", data: Buffer.alloc(768) }, { type: "ic09", data: jp2 }]));
    expect("images" in legacy && legacy.images).toEqual([]);
    expect(await readIcns(Buffer.from("not an icon"))).toEqual({ problem: expect.stringContaining("magic") });
    const good = typicalIcns();
    const longer = Buffer.from(good);
    longer.writeUInt32BE(good.length + 10, 4);
    expect(await readIcns(longer)).toEqual({ problem: expect.stringContaining(`says ${good.length + 10} bytes`) });
    const overlong = Buffer.from(good);
    overlong.writeUInt32BE(0xffff, 8 + 4); // the TOC element claims more than the file has
    expect(await readIcns(overlong)).toEqual({ problem: expect.stringContaining("\"TOC \"") });
    const flipped = Buffer.from(ICON_256);
    flipped.writeUInt8(flipped.readUInt8(flipped.length - 40) ^ 0xff, flipped.length - 40); // inside the last IDAT: its CRC no longer matches
    expect(await readIcns(icnsFile([{ type: "ic08", data: flipped }]))).toMatchObject({ images: [], broken: [{ type: "ic08", problem: expect.stringContaining("CRC") }] });
  });

  it("the PNG reader checks structure and CRCs and reads the size", async () => {
    expect(await readPng(ICON_64)).toEqual({ width: 64, height: 64 });
    expect(await readPng(ICON_64.subarray(0, ICON_64.length - 5))).toEqual({ problem: expect.stringContaining("truncated") });
    expect(await readPng(Buffer.concat([ICON_64, Buffer.from("extra")]))).toEqual({ problem: "5 bytes follow its IEND chunk" });
  });
});

describe("the bundle's icon (CFBundleIconFile)", () => {
  it("reads Contents/Resources/<name>.icns, with or without the extension", async () => {
    const app = await bundleWith({ "AppIcon.icns": typicalIcns() });
    for (const name of ["AppIcon", "AppIcon.icns"]) {
      const { icon, note } = await readBundleIcon(app, name);
      expect(note).toBeUndefined();
      expect(icon?.png.equals(ICON_256)).toBe(true);
      expect(icon?.file).toBe("Contents/Resources/AppIcon.icns");
    }
    expect(await readBundleIcon(app, undefined)).toEqual({});
  });

  it("a named icon that is missing, not a file name, leaves the bundle or is broken is refused; one without PNG publishes with a note", async () => {
    const app = await bundleWith({ "Legacy.icns": icnsFile([{ type: "is32", data: Buffer.alloc(768) }]), "Broken.icns": Buffer.from("icns\0\0\0\x20") });
    expect((await refusal(readBundleIcon(app, "AppIcon"))).message).toBe('Info.plist names CFBundleIconFile "AppIcon", but the bundle has no Contents/Resources/AppIcon.icns; Finder would show a generic icon');
    expect((await refusal(readBundleIcon(app, "../Info"))).code).toBe("E_PLIST");
    expect((await refusal(readBundleIcon(app, "Broken"))).message).toContain("is not a valid .icns file");
    await symlink("/etc/hostname", path.join(app, "Contents", "Resources", "Out.icns"));
    expect((await refusal(readBundleIcon(app, "Out"))).message).toContain("outside the bundle");
    const legacy = await readBundleIcon(app, "Legacy");
    expect(legacy.icon).toBeUndefined();
    expect(legacy.note).toContain("holds no PNG image (its elements: is32)");
  });
});

/** The problem readPng names, or "ok". */
async function verdict(png: Buffer): Promise<string> {
  const got = await readPng(png);
  return "problem" in got ? got.problem : "ok";
}

describe("PNGs a browser cannot decode are refused, not chosen", () => {
  const giantBroken = pngOf(ihdr({ width: 4096, height: 4096 }), pngChunk("IDAT", Buffer.from("xx")));

  it("a 4096×4096 header over image data that is not zlib loses to the real 256×256 image, with a warning", async () => {
    expect(await verdict(giantBroken)).toMatch(/not a valid zlib stream/);
    const app = await bundleWith({ "AppIcon.icns": icnsFile([{ type: "ic10", data: giantBroken }, { type: "ic08", data: ICON_256 }]) });
    const { icon, note } = await readBundleIcon(app, "AppIcon");
    expect(icon?.type).toBe("ic08");
    expect(icon?.png.equals(ICON_256)).toBe(true);
    expect(note).toMatch(/"ic10" element does not decode: .*zlib.*skipped: the page shows its "ic08" image \(256×256\)/);
    // An icon whose only PNG does not decode is refused: the publish stops.
    const only = await bundleWith({ "AppIcon.icns": icnsFile([{ type: "ic10", data: giantBroken }]) });
    expect((await refusal(readBundleIcon(only, "AppIcon"))).message).toMatch(/not a valid \.icns file: the PNG in its "ic10" element does not decode/);
  });

  it("header fields, chunks and image data are held to what decoders accept", async () => {
    const rows = (w: number, h: number, bpp: number): Buffer => deflateSync(Buffer.alloc(h * (1 + Math.ceil((w * bpp) / 8))));
    const idat = pngChunk("IDAT", rows(2, 2, 32));
    expect(await verdict(rgbaPng(2, 2))).toBe("ok");
    expect(await verdict(pngOf(ihdr({ width: 2, height: 2, bitDepth: 0 }), idat))).toMatch(/colour type 6 with bit depth 0/);
    expect(await verdict(pngOf(ihdr({ width: 2, height: 2, colourType: 9 }), idat))).toMatch(/colour type 9/);
    expect(await verdict(pngOf(ihdr({ width: 2, height: 2, colourType: 2, bitDepth: 4 }), idat))).toMatch(/colour type 2 with bit depth 4/);
    expect(await verdict(pngOf(ihdr({ width: 2, height: 2, interlace: 5 }), idat))).toMatch(/interlace method 5/);
    expect(await verdict(pngOf(ihdr({ width: 2, height: 2, compression: 1 }), idat))).toMatch(/compression method 1/);
    expect(await verdict(pngOf(ihdr({ width: 2, height: 2, filter: 1 }), idat))).toMatch(/filter method 1/);
    expect(await verdict(pngOf(ihdr({ width: 2, height: 2 }), pngChunk("IDAT")))).toMatch(/not a valid zlib stream/);
    expect(await verdict(pngOf(ihdr({ width: 2, height: 2 }), pngChunk("ABCD", Buffer.from("x")), idat))).toMatch(/critical chunk ABCD/);
    expect(await verdict(pngOf(ihdr({ width: 2, height: 2 }), pngChunk("abCD", Buffer.from("x")), idat))).toBe("ok"); // ancillary: skipped by decoders
    const indexed = ihdr({ width: 2, height: 2, colourType: 3, bitDepth: 8 });
    expect(await verdict(pngOf(indexed, pngChunk("IDAT", rows(2, 2, 8))))).toMatch(/no PLTE/);
    expect(await verdict(pngOf(indexed, pngChunk("PLTE", Buffer.alloc(6)), pngChunk("IDAT", rows(2, 2, 8))))).toBe("ok");
    // Too few bytes, too many, and a row whose filter type does not exist.
    expect(await verdict(pngOf(ihdr({ width: 2, height: 2 }), pngChunk("IDAT", rows(2, 1, 32))))).toMatch(/inflates to 9 bytes; .* needs 18/);
    expect(await verdict(pngOf(ihdr({ width: 2, height: 2 }), pngChunk("IDAT", rows(2, 3, 32))))).toMatch(/more than the 18 bytes/);
    expect(await verdict(pngOf(ihdr({ width: 2, height: 2 }), pngChunk("IDAT", deflateSync(Buffer.from([0, 0, 0, 0, 0, 0, 0, 0, 0, 7, 0, 0, 0, 0, 0, 0, 0, 0])))))).toMatch(/filter type 7/);
    // A zlib bomb (a 4096×4096 header, 1 GiB of zeros) is stopped at the size the header allows.
    expect(await verdict(pngOf(ihdr({ width: 4096, height: 4096, bitDepth: 8, colourType: 0 }), pngChunk("IDAT", deflateSync(Buffer.alloc(32 * 1024 * 1024)))))).toMatch(/more than the 16781312 bytes/);
  });

  it("an Adam7-interlaced image needs the seven passes' rows (worked out by hand from the spec's pass table)", async () => {
    // 8×8 RGBA8: passes are 1×1, 1×1, 2×1, 2×2, 4×2, 4×4, 8×4 pixels; each row 1 filter byte + 4 bytes a pixel.
    const passes = 1 * 5 + 1 * 5 + 1 * 9 + 2 * 9 + 2 * 17 + 4 * 17 + 4 * 33;
    expect(passes).toBe(271);
    const adam7 = ihdr({ width: 8, height: 8, interlace: 1 });
    expect(await verdict(pngOf(adam7, pngChunk("IDAT", deflateSync(Buffer.alloc(passes)))))).toBe("ok");
    expect(await verdict(pngOf(adam7, pngChunk("IDAT", deflateSync(Buffer.alloc(8 * 33)))))).toMatch(/inflates to 264 bytes; .* needs 271/);
    // 1×1: only the first pass has pixels. 3×1 grey 1-bit: passes 1 (x 0), 6 (x 1) and 4 (x 2) of one pixel each, 2 bytes a row.
    expect(await verdict(pngOf(ihdr({ width: 1, height: 1, interlace: 1 }), pngChunk("IDAT", deflateSync(Buffer.alloc(5)))))).toBe("ok");
    expect(await verdict(pngOf(ihdr({ width: 3, height: 1, bitDepth: 1, colourType: 0, interlace: 1 }), pngChunk("IDAT", deflateSync(Buffer.alloc(6)))))).toBe("ok");
    // The IDAT data may be split across chunks anywhere.
    const z = deflateSync(Buffer.alloc(passes));
    expect(await verdict(pngOf(adam7, pngChunk("IDAT", z.subarray(0, 3)), pngChunk("IDAT", z.subarray(3))))).toBe("ok");
  });
});

describe("hostile .icns files stay cheap to read and to report", () => {
  it("more elements than an icon has is refused; the element list of a warning names each type once, capped", async () => {
    const many = icnsFile(Array.from({ length: ICNS_MAX_ELEMENTS + 1 }, () => ({ type: "is32", data: Buffer.alloc(0) })));
    expect(await readIcns(many)).toEqual({ problem: expect.stringContaining(`more than ${ICNS_MAX_ELEMENTS} elements`) });
    const mixed = icnsFile(Array.from({ length: ICNS_MAX_ELEMENTS }, (_, i) => ({ type: `t${String(i % 40).padStart(3, "0")}`, data: Buffer.alloc(0) })));
    const app = await bundleWith({ "AppIcon.icns": mixed });
    const { note } = await readBundleIcon(app, "AppIcon");
    expect(note).toContain("its elements: t000 ×7, t001 ×7,");
    expect(note).toContain("and 28 more types)");
    expect(note!.length).toBeLessThan(400);
  });

  it("a CFBundleIconFile that is missing stops the publish whatever its extension; a present non-.icns one is a warning", async () => {
    const app = await bundleWith({ "Present.png": ICON_64 });
    const err = await refusal(readBundleIcon(app, "AppIcon.png"));
    expect(err.code).toBe("E_PLIST");
    expect(err.message).toBe('Info.plist names CFBundleIconFile "AppIcon.png", but the bundle has no Contents/Resources/AppIcon.png; Finder would show a generic icon');
    expect((await readBundleIcon(app, "Present.png")).note).toContain("is not an .icns file");
  });
});
