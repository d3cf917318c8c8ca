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

/**
 * One reading of a zip's names, kinds and modes in both readers (the unpacker `delta create` uses, and the in-place
 * layout publish uses for old zips): what one refuses the other refuses, with the same reason, and what both take
 * is the same tree.
 */
describe("both zip readers: one rule for names, kinds, modes and link lengths", () => {
  async function refusedByBoth(zip: string, why: string): Promise<void> {
    const err = await openZipBundleTree(zip).catch((e: unknown) => e);
    expect(isRelcastError(err) && err.code, String(err)).toBe("E_INPUT");
    expect((err as Error).message).toContain(why);
    expect(await refused(zip, path.join(dir, `both-${path.basename(zip)}`))).toContain(why);
  }

  /** A zip whose name `from` (ASCII, so written without the UTF-8 flag) is then replaced by the same number of raw bytes. */
  async function withRawName(name: string, from: string, to: Buffer): Promise<string> {
    const zip = makeZip(name, [["P.plugin/Contents/Info.plist", "file", "<plist/>"], [`P.plugin/Contents/${from}`, "file", "a"]]);
    const bytes = await readFile(zip);
    const needle = Buffer.from(from);
    let at = bytes.indexOf(needle);
    expect(at).toBeGreaterThan(0);
    for (; at >= 0; at = bytes.indexOf(needle, at + 1)) to.copy(bytes, at);
    await writeFile(zip, bytes);
    return zip;
  }

  it("a UTF-8 name stored without the UTF-8 flag (as ditto writes) is read as UTF-8 by both: one tree, not CP437 in one of them", async () => {
    const zip = await withRawName("noflag", "cafXX", Buffer.from("café"));
    // Python, an independent reader, sees the flag clear (it decodes such a name as CP437).
    const flags = execFileSync("python3", ["-c", "import sys, zipfile; print([i.flag_bits & 0x800 for i in zipfile.ZipFile(sys.argv[1]).infolist()])", zip], { encoding: "utf8" }).trim();
    expect(flags).toBe("[0, 0]");
    const into = path.join(dir, "u-noflag");
    const root = await extractBundleZip(zip, into);
    try {
      expect((await readdir(path.join(root, "Contents"))).sort()).toEqual(["Info.plist", "café"]);
      const inPlace = await openZipBundleTree(zip);
      try {
        expect(inPlace.entries.map((e) => e.rel)).toContain("/Contents/café");
        expect(inPlace.hash.toString("hex")).toBe((await hashTree(root)).hash.toString("hex"));
      } finally {
        await inPlace.close();
      }
    } finally {
      await removeTree(into);
    }
  });

  it("a name that is not UTF-8 is refused by both (never CP437, never U+FFFD), its bytes shown", async () => {
    const zip = await withRawName("latin1-name", "cafeX", Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x58]));
    await refusedByBoth(zip, "the entry name P.plugin/Contents/caf\\xe9X is not valid UTF-8");
  });

  it("a link target longer than 1023 bytes (macOS's PATH_MAX 1024 with its NUL) is refused by both; 1023 bytes unpack", async () => {
    const long = makeZip("link-1024", [["P.plugin/Contents/Info.plist", "file", "<plist/>"], ["P.plugin/Contents/l", "link", `${"./".repeat(507)}Info.plist`]]);
    await refusedByBoth(long, "symlink P.plugin/Contents/l has a 1024-byte target, longer than the 1023 bytes macOS can make");
    const fits = makeZip("link-1023", [["P.plugin/Contents/Info.plist", "file", "<plist/>"], ["P.plugin/Contents/l", "link", `${"./".repeat(505)}.//Info.plist`]]);
    const into = path.join(dir, "u-1023");
    const root = await extractBundleZip(fits, into);
    expect((await lstat(path.join(root, "Contents", "l"))).isSymbolicLink()).toBe(true);
    await removeTree(into);
    const inPlace = await openZipBundleTree(fits);
    await inPlace.close();
  });

  it("modes the owner cannot read (folder 0644 or 01000, file 0200 or 01000) are refused by both, naming the entry and mode (was exit 70, EACCES, when not root)", async () => {
    const cases: Array<[string, [string, "dir" | "file", string?, number?], string]> = [
      ["dir0644", ["P.plugin/Contents/D/", "dir", undefined, 0o644], "the folder P.plugin/Contents/D/ has mode 0644, which its owner cannot list"],
      ["dirsticky", ["P.plugin/Contents/D/", "dir", undefined, 0o1000], "the folder P.plugin/Contents/D/ has mode 1000, which its owner cannot list"],
      ["file0200", ["P.plugin/Contents/f", "file", "f", 0o200], "the file P.plugin/Contents/f has mode 0200, which its owner cannot read"],
      ["filesticky", ["P.plugin/Contents/f", "file", "f", 0o1000], "the file P.plugin/Contents/f has mode 1000, which its owner cannot read"],
    ];
    for (const [name, entry, why] of cases) {
      await refusedByBoth(makeZip(`mode-${name}`, [["P.plugin/Contents/Info.plist", "file", "<plist/>"], entry, ["P.plugin/Contents/D/f", "file", "f"]]), why);
    }
  });

  it("setuid and setgid bits are refused by both (a delta applied as root would recreate them)", async () => {
    await refusedByBoth(makeZip("setuid-file", [["P.plugin/Contents/Info.plist", "file", "<plist/>"], ["P.plugin/Contents/f", "file", "f", 0o4755]]), "P.plugin/Contents/f has the setuid or setgid bit (mode 4755)");
    await refusedByBoth(makeZip("setgid-dir", [["P.plugin/Contents/Info.plist", "file", "<plist/>"], ["P.plugin/Contents/D/", "dir", undefined, 0o2755]]), "P.plugin/Contents/D/ has the setuid or setgid bit (mode 2755)");
  });

  it("an entry whose name and mode disagree is refused by both (unzip and bsdtar would lay it out differently)", async () => {
    await refusedByBoth(makeZip("noslash-dirmode", [["P.plugin/Contents/Info.plist", "file", "<plist/>"], ["P.plugin/Contents/D", "dir", "junk"]]), "P.plugin/Contents/D has a folder's mode but holds 4 bytes of data");
    await refusedByBoth(makeZip("slash-linkmode", [["P.plugin/Contents/Info.plist", "file", "<plist/>"], ["P.plugin/Contents/D/", "link", ""]]), 'P.plugin/Contents/D/ ends in "/" (a folder) but its mode 120755 is not a folder\'s');
  });

  it("delta create refuses such a zip with exit 4 naming the entry, never an internal error (exit 70)", () => {
    const old = makeZip("cli-old", [["P.plugin/Contents/Info.plist", "file", "<plist/>"]]);
    const bad = makeZip("cli-dir0644", [["P.plugin/Contents/Info.plist", "file", "<plist/>"], ["P.plugin/Contents/D/", "dir", undefined, 0o644], ["P.plugin/Contents/D/f", "file", "f"]]);
    const res = spawnSync(process.execPath, [CLI, "delta", "create", old, bad, path.join(dir, "cli.delta"), "--compression", "zlib"], { encoding: "utf8" });
    expect(res.status, res.stderr).toBe(4);
    expect(res.stderr).toContain("the folder P.plugin/Contents/D/ has mode 0644");
  });
});
