import { mkdir, mkdtemp, rm, symlink, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isRelcastError } from "../../src/core/errors.js";
import { checkBundleTree } from "../../src/bundle/bundle-tree-check.js";

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
});
