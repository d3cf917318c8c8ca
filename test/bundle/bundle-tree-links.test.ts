import { symlinkSync } from "node:fs";
import { mkdir, mkdtemp, rm, symlink, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isRelcastError, type RelcastError } from "../../src/core/errors.js";
import { checkBundleTree } from "../../src/bundle/bundle-tree-check.js";
import { listBundleEntries } from "../../src/steps/zip/bundle-entries.js";

/**
 * Preflight reads every link both ways: as the kernel resolves it (through the links on the way) and as written
 * (Sparkle's and the zip rules' reading). A link only one reading keeps inside is refused before anything is
 * zipped, not at the zip step or in an installed copy.
 */
let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "relcast-bundle-links-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function bundle(name: string): Promise<string> {
  const root = path.join(dir, name, "P.plugin");
  await mkdir(path.join(root, "Contents", "Resources", "deep", "er"), { recursive: true });
  await writeFile(path.join(root, "Contents", "Info.plist"), "<plist/>");
  return root;
}

describe("preflight: links read as the kernel and as written", () => {
  it("refuses a link the kernel keeps inside but that climbs out as written (x/../../.. with x a deep link)", async () => {
    const root = await bundle("lexical");
    await symlink("Resources/deep/er", path.join(root, "Contents", "x"));
    await symlink("x/../../..", path.join(root, "Contents", "a"));
    const err = await checkBundleTree(root).catch((e: unknown) => e);
    expect(isRelcastError(err) && err.code).toBe("E_INPUT");
    expect((err as Error).message).toContain("symlink P.plugin/Contents/a: link /Contents/a points at \"x/../../..\", outside the bundle when read as written");
  });

  it("accepts links inside by both readings (a chain through another link included)", async () => {
    const root = await bundle("fine");
    await symlink("Resources/deep", path.join(root, "Contents", "d"));
    await symlink("d/er", path.join(root, "Contents", "e"));
    await symlink("../Info.plist", path.join(root, "Contents", "Resources", "plist"));
    await expect(checkBundleTree(root)).resolves.toBeUndefined();
  });

  it("refuses a link to a folder that ends in \"/\" only when it reaches a folder: Info.plist/ and ../Info.plist/ are broken links", async () => {
    for (const [name, where, target] of [["slash-here", "Contents", "Info.plist/"], ["slash-up", "Contents/Resources", "../Info.plist/"]] as const) {
      const root = await bundle(name);
      await symlink(target, path.join(root, where, "x"));
      const err = await checkBundleTree(root).catch((e: unknown) => e);
      expect(isRelcastError(err) && err.code, String(err)).toBe("E_INPUT");
      expect((err as Error).message).toContain(`symlink P.plugin/${where}/x -> ${target} ends in "/" but reaches Contents/Info.plist, which is not a folder`);
      expect((err as RelcastError).hint).toContain('a target ending in "/" must name a folder');
    }
    // The same through a chain: y -> x/ with x -> Info.plist.
    const chain = await bundle("slash-chain");
    await symlink("Info.plist", path.join(chain, "Contents", "x"));
    await symlink("x/", path.join(chain, "Contents", "y"));
    await expect(checkBundleTree(chain)).rejects.toThrow(/symlink P\.plugin\/Contents\/y -> x\/ ends in "\/" but reaches Contents\/Info\.plist, which is not a folder/);
    // A trailing "/" on a link to a folder is what the kernel follows.
    const fine = await bundle("slash-folder");
    await symlink("Resources/deep/", path.join(fine, "Contents", "d"));
    await symlink("../deep/er/", path.join(fine, "Contents", "Resources", "deep", "e"));
    await expect(checkBundleTree(fine)).resolves.toBeUndefined();
  });
});

describe("preflight and the zip's listing: link targets are bytes, and only UTF-8 ones are taken", () => {
  // A file whose UTF-8 name holds U+FFFD beside a link whose target is the same name with a raw 0xFF byte: the kernel
  // finds nothing at the link's target, but a reader that decodes the target (as UTF-8, with U+FFFD) finds the file,
  // and a zip would store the decoded target: not the link codesign sealed.
  async function lookalike(name: string): Promise<string> {
    const root = await bundle(name);
    await writeFile(path.join(root, "Contents", "Resources", "a\uFFFD"), "decoy");
    symlinkSync(Buffer.from([0x61, 0xff]), Buffer.from(path.join(root, "Contents", "Resources", "l")));
    return root;
  }

  it("preflight refuses a link whose target is not UTF-8 (E_INPUT naming the link and the bytes, with the fix)", async () => {
    const root = await lookalike("non-utf8-target");
    const err = await checkBundleTree(root).catch((e: unknown) => e);
    expect(isRelcastError(err) && err.code, String(err)).toBe("E_INPUT");
    expect((err as Error).message).toBe("the bundle has a symlink whose target is not valid UTF-8: P.plugin/Contents/Resources/l -> a\\xff");
    expect((err as RelcastError).hint).toMatch(/point it at a UTF-8 name .*convmv.*ln -sfn/);
  });

  it("preflight refuses a link that reaches a non-UTF-8 target through another link", async () => {
    const root = await bundle("non-utf8-chain");
    await mkdir(path.join(root, "Contents", "Resources", "a\uFFFD"));
    symlinkSync(Buffer.from([0x61, 0xff, 0x2f]), Buffer.from(path.join(root, "Contents", "Resources", "z-bad")));
    await symlink("z-bad", path.join(root, "Contents", "Resources", "a-chain"));
    const err = await checkBundleTree(root).catch((e: unknown) => e);
    expect(isRelcastError(err) && err.code, String(err)).toBe("E_INPUT");
    expect((err as Error).message).toContain("symlink P.plugin/Contents/Resources/a-chain -> z-bad reaches Contents/Resources/z-bad -> a\\xff/, which has a target that is not valid UTF-8");
  });

  it("the zip's listing refuses it too (the bundle may change after preflight), and a non-UTF-8 name", async () => {
    const root = await lookalike("listing-target");
    const err = await listBundleEntries(root).catch((e: unknown) => e);
    expect(isRelcastError(err) && err.code, String(err)).toBe("E_INPUT");
    expect((err as Error).message).toBe("the bundle has a symlink whose target is not valid UTF-8: P.plugin/Contents/Resources/l -> a\\xff");
    const named = await bundle("listing-name");
    await writeFile(Buffer.from(`${path.join(named, "Contents")}/caf\xe9`, "latin1"), "x");
    const nameErr = await listBundleEntries(named).catch((e: unknown) => e);
    expect(isRelcastError(nameErr) && nameErr.code, String(nameErr)).toBe("E_INPUT");
    expect((nameErr as Error).message).toBe("the bundle has a file name that is not valid UTF-8: P.plugin/Contents/caf\\xe9");
  });
});

describe("preflight and the zip's listing: one name rule and one link rule with the zip readers", () => {
  async function refusedBoth(root: string): Promise<[string, string]> {
    const pre = await checkBundleTree(root).catch((e: unknown) => e);
    expect(isRelcastError(pre) && pre.code, String(pre)).toBe("E_INPUT");
    const listed = await listBundleEntries(root).catch((e: unknown) => e);
    expect(isRelcastError(listed) && listed.code, String(listed)).toBe("E_INPUT");
    return [(pre as Error).message, (listed as Error).message];
  }

  it("refuses a file, folder or link named with a backslash (the zip readers refuse it, so the release could never be a delta base), naming it and the fix", async () => {
    for (const [name, make] of [
      ["bs-file", (p: string) => writeFile(p, "hi")],
      ["bs-dir", (p: string) => mkdir(p)],
      ["bs-link", (p: string) => symlink("Info.plist", p)],
    ] as const) {
      const root = await bundle(name);
      await make(path.join(root, "Contents", "x\\y"));
      const [pre, listed] = await refusedBoth(root);
      for (const message of [pre, listed]) expect(message).toContain("P.plugin/Contents/x\\y holds a backslash");
      expect(pre).toContain("P.plugin/Contents/x\\y");
      const hint = ((await checkBundleTree(root).catch((e: unknown) => e)) as RelcastError).hint;
      expect(hint).toContain("rename it");
    }
  });

  it("refuses two spellings of one macOS name in a folder (case; NFC and NFD), the listing as preflight, nothing listed", async () => {
    for (const [name, a, b] of [["twin-case", "README.txt", "readme.TXT"], ["twin-nfd", "caf\u00e9", "cafe\u0301"]] as const) {
      const root = await bundle(name);
      await writeFile(path.join(root, "Contents", "Resources", a), "a");
      await writeFile(path.join(root, "Contents", "Resources", b), "b");
      const [pre, listed] = await refusedBoth(root);
      for (const message of [pre, listed]) {
        expect(message).toContain("P.plugin/Contents/Resources holds");
        expect(message).toContain("one name on macOS's default file system");
        expect(message).toContain(`"${a}"`);
        expect(message).toContain(`"${b}"`);
      }
    }
  });

  it("refuses a bundle folder whose own name holds a backslash (the zip's top entry)", async () => {
    const root = path.join(dir, "bs-top", "P\\Q.plugin");
    await mkdir(path.join(root, "Contents"), { recursive: true });
    await writeFile(path.join(root, "Contents", "Info.plist"), "<plist/>");
    const [pre, listed] = await refusedBoth(root);
    expect(pre).toContain("P\\Q.plugin");
    expect(listed).toContain("holds a backslash");
  });

  it("refuses a link target longer than 1023 bytes (macOS's PATH_MAX 1024 with its NUL), accepts one of 1023", async () => {
    const long = await bundle("long-target");
    await symlink(`${"./".repeat(550)}Info.plist`, path.join(long, "Contents", "l"));
    const err = await checkBundleTree(long).catch((e: unknown) => e);
    expect(isRelcastError(err) && err.code, String(err)).toBe("E_INPUT");
    expect((err as Error).message).toContain("1110-byte target, longer than the 1023 bytes macOS can make");
    expect((err as Error).message.length).toBeLessThan(800);
    const fits = await bundle("fits-target");
    const target = `${"./".repeat(505)}.//Info.plist`;
    expect(Buffer.byteLength(target)).toBe(1023);
    await symlink(target, path.join(fits, "Contents", "l"));
    await expect(checkBundleTree(fits)).resolves.toBeUndefined();
  });

  it("refuses a/../X/ where X is a file as written, though the kernel reaches a folder through a: the reason says so, not \"broken link\"", async () => {
    const root = await bundle("text-names-file");
    await writeFile(path.join(root, "Contents", "X"), "file");
    await mkdir(path.join(root, "Contents", "Resources", "X"));
    await symlink("Resources/deep", path.join(root, "Contents", "a"));
    await symlink("a/../X/", path.join(root, "Contents", "l"));
    const err = await checkBundleTree(root).catch((e: unknown) => e);
    expect(isRelcastError(err) && err.code, String(err)).toBe("E_INPUT");
    const message = (err as Error).message;
    expect(message).toContain('symlink P.plugin/Contents/l: link /Contents/l points at "a/../X/", which ends in "/" (a folder) but, read as text, names the file /Contents/X');
    expect(message).not.toContain("kernel");
  });
});

describe("preflight: a link that misses a name only by Unicode form or case", () => {
  it("names the near match (NFD target, NFC file)", async () => {
    const root = await bundle("nfd-target");
    await writeFile(path.join(root, "Contents", "caf\u00e9"), "a");
    await symlink("cafe\u0301", path.join(root, "Contents", "l"));
    const err = await checkBundleTree(root).catch((e: unknown) => e);
    expect(isRelcastError(err) && err.code, String(err)).toBe("E_INPUT");
    expect((err as Error).message).toContain(`goes to Contents/cafe\u0301, which does not exist in the bundle (its folder holds "caf\u00e9", the same name in another Unicode normalization or case`);
  });
});
