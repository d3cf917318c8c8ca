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
    const reading = readIcns(typicalIcns());
    if ("problem" in reading) throw new Error(reading.problem);
    expect(reading.types).toEqual(["TOC ", "is32", "ic12", "ic08"]);
    expect(reading.images.map((i) => [i.type, i.width, i.height])).toEqual([["ic12", 64, 64], ["ic08", 256, 256]]);
    const best = largestPng(reading.images)!;
    expect(best.png.equals(ICON_256)).toBe(true);
    const out = path.join(await mkdtemp(path.join(os.tmpdir(), "relcast-icns-")), "icon.png");
    await writeFile(out, best.png);
    expect(execFileSync("file", ["-b", out], { encoding: "utf8" })).toMatch(/^PNG image data, 256 x 256/);
    // Whatever the order of the elements.
    const reversed = readIcns(icnsFile([{ type: "ic08", data: ICON_256 }, { type: "ic12", data: ICON_64 }]));
    expect("images" in reversed && largestPng(reversed.images)?.type).toBe("ic08");
  });

  it("an icon of only legacy or JPEG 2000 images has no PNG; broken containers and images are named", () => {
    const jp2 = Buffer.from("0000000c6a5020200d0a870a", "hex");
    const legacy = readIcns(icnsFile([{ type: "is32", data: Buffer.alloc(768) }, { type: "ic09", data: jp2 }]));
    expect("images" in legacy && legacy.images).toEqual([]);
    expect(readIcns(Buffer.from("not an icon"))).toEqual({ problem: expect.stringContaining("magic") });
    const good = typicalIcns();
    const longer = Buffer.from(good);
    longer.writeUInt32BE(good.length + 10, 4);
    expect(readIcns(longer)).toEqual({ problem: expect.stringContaining(`says ${good.length + 10} bytes`) });
    const overlong = Buffer.from(good);
    overlong.writeUInt32BE(0xffff, 8 + 4); // the TOC element claims more than the file has
    expect(readIcns(overlong)).toEqual({ problem: expect.stringContaining("\"TOC \"") });
    const flipped = Buffer.from(ICON_256);
    flipped.writeUInt8(flipped.readUInt8(flipped.length - 40) ^ 0xff, flipped.length - 40); // inside the last IDAT: its CRC no longer matches
    expect(readIcns(icnsFile([{ type: "ic08", data: flipped }]))).toEqual({ problem: expect.stringMatching(/"ic08".*CRC/) });
  });

  it("the PNG reader checks structure and CRCs and reads the size", () => {
    expect(readPng(ICON_64)).toEqual({ width: 64, height: 64 });
    expect(readPng(ICON_64.subarray(0, ICON_64.length - 5))).toEqual({ problem: expect.stringContaining("truncated") });
    expect(readPng(Buffer.concat([ICON_64, Buffer.from("extra")]))).toEqual({ problem: "5 bytes follow its IEND chunk" });
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
