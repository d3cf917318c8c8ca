import { execFileSync } from "node:child_process";
import { mkdir, mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isRelcastError } from "../../../src/core/errors.js";
import { extractBundleZip } from "../../../src/sparkle/delta/zip-tree.js";

/**
 * Zips made by Python's zipfile (an independent writer) that `delta create` must refuse to unpack, with E_INPUT
 * naming the entry, and without writing outside its folder or reading a folder of this machine as the bundle.
 */
let dir: string;
let outside: string;
beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "relcast-zip-tree-"));
  outside = path.join(dir, "outside");
  await mkdir(outside);
  await writeFile(path.join(outside, "secret.txt"), "SECRET");
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** entries: [name, kind, data] with kind "dir" | "file" | "link" (data: the link's target). */
function makeZip(name: string, entries: Array<[string, "dir" | "file" | "link", string?]>): string {
  const file = path.join(dir, `${name}.zip`);
  const script = [
    "import sys, json, stat, zipfile",
    "z = zipfile.ZipFile(sys.argv[1], 'w')",
    "for name, kind, data in json.loads(sys.argv[2]):",
    "    zi = zipfile.ZipInfo(name); zi.create_system = 3",
    "    mode = {'dir': stat.S_IFDIR | 0o755, 'file': stat.S_IFREG | 0o644, 'link': stat.S_IFLNK | 0o755}[kind]",
    "    zi.external_attr = mode << 16",
    "    z.writestr(zi, data or '')",
    "z.close()",
  ].join("\n");
  execFileSync("python3", ["-c", script, file, JSON.stringify(entries.map(([n, k, d]) => [n, k, d ?? null]))]);
  return file;
}

async function refused(zip: string, into: string): Promise<string> {
  const err = await extractBundleZip(zip, into).catch((e: unknown) => e);
  expect(isRelcastError(err) && err.code, String(err)).toBe("E_INPUT");
  return (err as Error).message;
}

describe("unpacking a hostile zip for delta create", () => {
  it("a top-level entry that is a symlink (to a folder of this machine) is refused, not read as the bundle", async () => {
    const zip = makeZip("top-link", [["P.plugin", "link", outside]]);
    expect(await refused(zip, path.join(dir, "u1"))).toContain("the top-level entry P.plugin is not a folder");
  });

  it("a top-level entry that is a file is refused (no internal error)", async () => {
    const zip = makeZip("top-file", [["P.plugin", "file", "x"]]);
    expect(await refused(zip, path.join(dir, "u2"))).toContain("the top-level entry P.plugin is not a folder");
  });

  it("an entry below a file of the same zip is refused naming both (no internal error)", async () => {
    const zip = makeZip("below-file", [["P.plugin/", "dir"], ["P.plugin/Contents/x", "file", "x"], ["P.plugin/Contents/x/y", "file", "y"]]);
    expect(await refused(zip, path.join(dir, "u3"))).toContain("P.plugin/Contents/x/y lies below the file P.plugin/Contents/x");
  });

  it("an entry below a symlink of the same zip is refused naming the entry and the link, and nothing is written through it", async () => {
    const zip = makeZip("below-link", [["P.plugin/", "dir"], ["P.plugin/Contents/l", "link", outside], ["P.plugin/Contents/l/pwned", "file", "x"]]);
    expect(await refused(zip, path.join(dir, "u4"))).toContain("P.plugin/Contents/l/pwned lies below the symlink P.plugin/Contents/l");
    expect(await readdir(outside)).toEqual(["secret.txt"]);
  });

  it("a symlink entry with an empty or NUL-holding target is refused (no internal error)", async () => {
    for (const [name, target] of [["empty", ""], ["nul", "a\u0000b"]] as const) {
      const zip = makeZip(`link-${name}`, [["P.plugin/", "dir"], ["P.plugin/Contents/Info.plist", "file", "<plist/>"], ["P.plugin/Contents/l", "link", target]]);
      expect(await refused(zip, path.join(dir, `u-${name}`))).toContain("symlink P.plugin/Contents/l has an empty or NUL-holding target");
    }
  });

  it("a well-formed bundle zip still unpacks (folders implied by their files)", async () => {
    const zip = makeZip("good", [["P.plugin/Contents/Info.plist", "file", "<plist/>"], ["P.plugin/Contents/l", "link", "Info.plist"]]);
    const root = await extractBundleZip(zip, path.join(dir, "u5"));
    expect(path.basename(root)).toBe("P.plugin");
    expect((await readdir(path.join(root, "Contents"))).sort()).toEqual(["Info.plist", "l"]);
  });
});
