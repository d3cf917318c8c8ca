import { execFileSync, spawnSync } from "node:child_process";
import { chmod, chown, copyFile, lstat, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isRelcastError } from "../../../src/core/errors.js";
import { removeTree } from "../../../src/core/remove-tree.js";
import { applyDelta } from "../../../src/sparkle/delta/delta-apply.js";
import { CLI } from "../../helpers/run-cli.js";
import { hashTree } from "../../../src/sparkle/delta/tree-hash.js";
import { openZipBundleTree } from "../../../src/sparkle/delta/zip-bundle-tree.js";
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

/**
 * entries: [name, kind, data, mode] with kind "dir" | "file" | "link" (data: the link's target, a string or raw
 * bytes; mode: the permission bits, default 0755 for folders and links, 0644 for files).
 */
function makeZip(name: string, entries: Array<[string, "dir" | "file" | "link", (string | Buffer)?, number?]>): string {
  const file = path.join(dir, `${name}.zip`);
  const script = [
    "import sys, json, stat, warnings, zipfile",
    "warnings.simplefilter('ignore')  # a duplicate name is what some tests want",
    "z = zipfile.ZipFile(sys.argv[1], 'w')",
    "for name, kind, data, perms in json.loads(sys.argv[2]):",
    "    zi = zipfile.ZipInfo(name); zi.create_system = 3",
    "    mode = {'dir': stat.S_IFDIR, 'file': stat.S_IFREG, 'link': stat.S_IFLNK}[kind] | (perms if perms is not None else 0o644 if kind == 'file' else 0o755)",
    "    zi.external_attr = mode << 16",
    "    z.writestr(zi, bytes.fromhex(data['hex']) if isinstance(data, dict) else (data or ''))",
    "z.close()",
  ].join("\n");
  const rows = entries.map(([n, k, d, m]) => [n, k, Buffer.isBuffer(d) ? { hex: d.toString("hex") } : (d ?? null), m ?? null]);
  execFileSync("python3", ["-c", script, file, JSON.stringify(rows)]);
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

  it("a symlink entry whose target is not UTF-8 is refused, not unpacked with U+FFFD in its place", async () => {
    const zip = makeZip("link-latin1", [["P.plugin/", "dir"], ["P.plugin/Contents/Info.plist", "file", "<plist/>"], ["P.plugin/Contents/l", "link", Buffer.from([0x61, 0xff])]]);
    expect(await refused(zip, path.join(dir, "u-latin1"))).toContain("symlink P.plugin/Contents/l has a target that is not valid UTF-8 (a\\xff)");
  });
});

/**
 * The publish path reads a zip's layout from its central directory (zip-layout.ts) and hashes its entries in one
 * pass (stored-zip-tree.ts) instead of unpacking it: both keep the unpacker's rules for links and folder entries.
 */
describe("the zip read in place keeps the unpacker's rules", () => {
  it("a symlink entry with an empty, NUL-holding or non-UTF-8 target is refused, as the unpacker refuses it", async () => {
    const cases: Array<[string, string | Buffer, string]> = [
      ["empty", "", "has an empty or NUL-holding target"],
      ["nul", "a\u0000b", "has an empty or NUL-holding target"],
      ["latin1", Buffer.from([0x61, 0xff]), "has a target that is not valid UTF-8"],
    ];
    for (const [name, target, why] of cases) {
      const zip = makeZip(`layout-${name}`, [["P.plugin/", "dir"], ["P.plugin/Contents/Info.plist", "file", "<plist/>"], ["P.plugin/Contents/l", "link", target]]);
      const err = await openZipBundleTree(zip).catch((e: unknown) => e);
      expect(isRelcastError(err) && err.code, `${name}: ${String(err)}`).toBe("E_INPUT");
      expect((err as Error).message).toContain(`symlink P.plugin/Contents/l ${why}`);
      expect(await refused(zip, path.join(dir, `u-layout-${name}`))).toContain(`symlink P.plugin/Contents/l ${why}`);
    }
  });

  it("a folder entry after its children sets the folder's mode (0555) in the unpacker and in the layout alike", async () => {
    const zip = makeZip("dir-after", [
      ["P.plugin/Contents/Info.plist", "file", "<plist/>"],
      ["P.plugin/Contents/Resources/a.txt", "file", "a"],
      ["P.plugin/Contents/Resources/", "dir", undefined, 0o555],
      ["P.plugin/Contents/", "dir", undefined, 0o555],
      ["P.plugin/", "dir", undefined, 0o755],
    ]);
    // Python's own reading of what it wrote: the folder entries come after their children.
    const order = execFileSync("python3", ["-c", "import sys, zipfile; print('\\n'.join(i.filename + ' ' + oct(i.external_attr >> 16) for i in zipfile.ZipFile(sys.argv[1]).infolist()))", zip], { encoding: "utf8" }).trim().split("\n");
    expect(order).toEqual(["P.plugin/Contents/Info.plist 0o100644", "P.plugin/Contents/Resources/a.txt 0o100644", "P.plugin/Contents/Resources/ 0o40555", "P.plugin/Contents/ 0o40555", "P.plugin/ 0o40755"]);
    const into = path.join(dir, "u-dir-after");
    const root = await extractBundleZip(zip, into);
    try {
      expect((await lstat(path.join(root, "Contents"))).mode & 0o7777).toBe(0o555);
      expect((await lstat(path.join(root, "Contents", "Resources"))).mode & 0o7777).toBe(0o555);
      expect(await readFile(path.join(root, "Contents", "Resources", "a.txt"), "utf8")).toBe("a");
      const inPlace = await openZipBundleTree(zip);
      try {
        expect(inPlace.entries.map((e) => [e.rel, e.kind, e.perms])).toEqual((await hashTree(root)).entries.map((e) => [e.rel, e.kind, e.perms]));
        expect(inPlace.hash.toString("hex")).toBe((await hashTree(root)).hash.toString("hex"));
      } finally {
        await inPlace.close();
      }
    } finally {
      await removeTree(into);
    }
  });

  it("a folder listed twice is still a duplicate, after its children or not", async () => {
    const zip = makeZip("dir-twice", [["P.plugin/Contents/Info.plist", "file", "<plist/>"], ["P.plugin/Contents/", "dir"], ["P.plugin/Contents/", "dir"]]);
    expect(await refused(zip, path.join(dir, "u-dir-twice"))).toContain("duplicate entry P.plugin/Contents");
    await expect(openZipBundleTree(zip)).rejects.toThrow(/duplicate entry P\.plugin\/Contents/);
  });
});

/**
 * The user a release engineer runs `delta create` as is not root: the kernel then keeps a folder's 0555 from its
 * children, and a scratch tree holding one cannot be deleted without giving its folders back their write bit.
 * The CLI runs as `nobody` when this test runs as root (root ignores folder modes, which hid the failure).
 */
describe("delta create from third-party zips with read-only folders, as a user other than root", () => {
  const restore: Array<[string, number]> = [];
  afterAll(async () => {
    for (const [folder, mode] of restore.reverse()) await chmod(folder, mode);
  });

  it("makes the delta (exit 0), and the applier turns the old tree into the new one", async () => {
    const work = await mkdtemp(path.join(os.tmpdir(), "relcast-nonroot-"));
    const asRoot = process.getuid?.() === 0;
    if (asRoot) {
      // The folders above the work folder are root's 0700 temp folders: `nobody` gets through them, nothing more.
      for (let at = path.dirname(work); ; at = path.dirname(at)) {
        const mode = (await lstat(at)).mode & 0o7777;
        if ((mode & 0o001) === 0) {
          restore.push([at, mode]);
          await chmod(at, mode | 0o001);
        }
        if (at === path.dirname(at)) break;
      }
    }
    const tmp = path.join(work, "tmp");
    await mkdir(tmp);
    const files = (text: string): Array<[string, "dir" | "file" | "link", string?, number?]> => [
      ["P.plugin/Contents/Info.plist", "file", "<plist/>"],
      ["P.plugin/Contents/Resources/a.txt", "file", text],
      ["P.plugin/Contents/Resources/l", "link", "a.txt"],
    ];
    // Old: folder entries before their children (read-only before the children are written; this was exit 70,
    // EACCES); new: after them (this was "duplicate entry").
    const oldZip = makeZip("nonroot-old", [["P.plugin/", "dir", undefined, 0o555], ["P.plugin/Contents/", "dir", undefined, 0o555], ["P.plugin/Contents/Resources/", "dir", undefined, 0o555], ...files("old text ".repeat(100))]);
    const newZip = makeZip("nonroot-new", [...files("new text ".repeat(100)), ["P.plugin/Contents/Resources/", "dir", undefined, 0o555], ["P.plugin/Contents/", "dir", undefined, 0o555], ["P.plugin/", "dir", undefined, 0o555]]);
    // In the work folder, where `nobody` may read them.
    for (const zip of [oldZip, newZip]) await copyFile(zip, path.join(work, path.basename(zip)));
    const [oldCopy, newCopy] = [oldZip, newZip].map((zip) => path.join(work, path.basename(zip)));
    const out = path.join(work, "out.delta");
    if (asRoot) await chown(work, 65534, 65534);
    if (asRoot) await chown(tmp, 65534, 65534);
    const env: NodeJS.ProcessEnv = { ...process.env, TMPDIR: tmp, HOME: work, GITHUB_ACTIONS: "" };
    delete env.NODE_COMPILE_CACHE;
    const res = spawnSync(process.execPath, [CLI, "delta", "create", oldCopy!, newCopy!, out, "--compression", "zlib"], { env, encoding: "utf8", ...(asRoot ? { uid: 65534, gid: 65534 } : {}) });
    expect(res.status, res.stderr).toBe(0);
    expect(res.stdout).toContain(`wrote ${out}`);
    // Both scratch trees (read-only folders and all) were removed.
    expect(await readdir(tmp)).toEqual([]);
    // Applied by relcast's applier to the old zip's tree, the delta gives the new zip's tree (it checks both hashes).
    const oldRoot = await extractBundleZip(oldZip, path.join(work, "old"));
    const applied = await applyDelta(oldRoot, path.join(work, "applied"), out);
    const newRoot = await extractBundleZip(newZip, path.join(work, "new"));
    expect(applied.header.afterHash).toBe((await hashTree(newRoot)).hash.toString("hex"));
    expect((await lstat(path.join(work, "applied", "Contents"))).mode & 0o7777).toBe(0o555);
    await removeTree(work);
  });
});
