import { symlinkSync } from "node:fs";
import { mkdir, mkdtemp, readdir, readlink, rm, symlink, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isRelcastError } from "../../../src/core/errors.js";
import { applyDelta } from "../../../src/sparkle/delta/delta-apply.js";
import { createDelta, createDeltaFromTrees } from "../../../src/sparkle/delta/delta-create.js";
import { hashTree } from "../../../src/sparkle/delta/tree-hash.js";

/**
 * The creator and the applier keep one rule for links (link-target-rule.ts): a link a delta would create that
 * climbs out of the bundle or is absolute is refused when the delta is made, as the applier (and Sparkle 2.9.2)
 * would refuse it when applied, and so is one that goes nowhere or leaves through another link (the applier
 * resolves every link of the result). A link to something inside the bundle is made and applied.
 */
let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "relcast-delta-links-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function trees(name: string, target: string): Promise<{ oldRoot: string; newRoot: string; out: string }> {
  const base = path.join(dir, name);
  const oldRoot = path.join(base, "old");
  const newRoot = path.join(base, "new");
  for (const root of [oldRoot, newRoot]) {
    await mkdir(path.join(root, "Contents", "Resources"), { recursive: true });
    await writeFile(path.join(root, "Contents", "Info.plist"), "<plist/>");
  }
  await symlink(target, path.join(newRoot, "Contents", "Resources", "link"));
  return { oldRoot, newRoot, out: path.join(base, "out.delta") };
}

describe("delta create: links the applier would refuse", () => {
  for (const target of ["../../../outside", "../../..", "/etc/passwd"]) {
    it(`refuses a new link to ${target} (E_INPUT naming the link) and writes no delta`, async () => {
      const t = await trees(`bad-${target.replace(/\W/g, "_")}`, target);
      const err = await createDelta(t.oldRoot, t.newRoot, t.out, { compression: "zlib" }).catch((e: unknown) => e);
      expect(isRelcastError(err) && err.code).toBe("E_INPUT");
      expect((err as Error).message).toMatch(/link \/Contents\/Resources\/link (climbs above the bundle|reaches .*, an absolute path outside the bundle)/);
      expect(await readdir(path.dirname(t.out))).toEqual(["new", "old"]);
      // From trees (the publish's path, trees read from zips): the link's own target is checked as the delta is made.
      const fromTrees = await createDeltaFromTrees(await hashTree(t.oldRoot), await hashTree(t.newRoot), t.out, { compression: "zlib" }).catch((e: unknown) => e);
      expect(isRelcastError(fromTrees) && fromTrees.code).toBe("E_INPUT");
      expect((fromTrees as Error).message).toMatch(/link \/Contents\/Resources\/link points at .*outside the bundle/);
      expect(await readdir(path.dirname(t.out))).toEqual(["new", "old"]);
    });
  }

  it("refuses a new link that goes nowhere (a dangling link inside the bundle), which the applier refuses too", async () => {
    const t = await trees("dangling", "../../Contents/missing");
    const err = await createDelta(t.oldRoot, t.newRoot, t.out, { compression: "zlib" }).catch((e: unknown) => e);
    expect(isRelcastError(err) && err.code).toBe("E_INPUT");
    expect((err as Error).message).toContain("link /Contents/Resources/link goes to Contents/missing, which does not exist in the bundle");
    expect(await readdir(path.dirname(t.out))).toEqual(["new", "old"]);
  });

  it("refuses a link that leaves the bundle only through another link (esc -> up/.. beside up -> ..)", async () => {
    const t = await trees("chain", "../Info.plist");
    await symlink("..", path.join(t.newRoot, "Contents", "up"));
    await symlink("up/..", path.join(t.newRoot, "Contents", "esc"));
    const err = await createDelta(t.oldRoot, t.newRoot, t.out, { compression: "zlib" }).catch((e: unknown) => e);
    expect(isRelcastError(err) && err.code).toBe("E_INPUT");
    expect((err as Error).message).toMatch(/link \/Contents\/(esc|up) climbs above the bundle/);
  });

  it("makes a delta with a link to a file inside the bundle, and the applier takes it", async () => {
    const t = await trees("inside", "../Info.plist");
    await createDelta(t.oldRoot, t.newRoot, t.out, { compression: "zlib" });
    const applied = path.join(dir, "inside", "applied");
    await applyDelta(t.oldRoot, applied, t.out);
    expect(await readlink(path.join(applied, "Contents", "Resources", "link"))).toBe("../Info.plist");
  });

  it("refuses a new link ending in \"/\" that names a file (a broken link to the kernel), from folders and from trees", async () => {
    const t = await trees("slash-file", "../Info.plist/");
    const err = await createDelta(t.oldRoot, t.newRoot, t.out, { compression: "zlib" }).catch((e: unknown) => e);
    expect(isRelcastError(err) && err.code, String(err)).toBe("E_INPUT");
    expect((err as Error).message).toContain('link /Contents/Resources/link ends in "/" but reaches Contents/Info.plist, which is not a folder');
    const fromTrees = await createDeltaFromTrees(await hashTree(t.oldRoot), await hashTree(t.newRoot), t.out, { compression: "zlib" }).catch((e: unknown) => e);
    expect(isRelcastError(fromTrees) && fromTrees.code, String(fromTrees)).toBe("E_INPUT");
    expect((fromTrees as Error).message).toContain('link /Contents/Resources/link points at "../Info.plist/", which ends in "/" (a folder) but, read as text, names the file /Contents/Info.plist');
    expect(await readdir(path.dirname(t.out))).toEqual(["new", "old"]);
  });

  it("makes a delta with a link ending in \"/\" to a folder, and the applier takes it", async () => {
    const t = await trees("slash-folder", "../Resources/");
    await createDelta(t.oldRoot, t.newRoot, t.out, { compression: "zlib" });
    const applied = path.join(dir, "slash-folder", "applied");
    await applyDelta(t.oldRoot, applied, t.out);
    expect(await readlink(path.join(applied, "Contents", "Resources", "link"))).toBe("../Resources/");
  });

  it("refuses a new link whose target is not UTF-8 (from trees: the bytes are never decoded into another link)", async () => {
    const t = await trees("latin1", "placeholder");
    await rm(path.join(t.newRoot, "Contents", "Resources", "link"));
    // A decoy named as the decoded target would be (U+FFFD), so only the bytes tell the link apart.
    await writeFile(path.join(t.newRoot, "Contents", "Resources", "a\uFFFD"), "decoy");
    symlinkSync(Buffer.from([0x61, 0xff]), Buffer.from(path.join(t.newRoot, "Contents", "Resources", "link")));
    const fromTrees = await createDeltaFromTrees(await hashTree(t.oldRoot), await hashTree(t.newRoot), t.out, { compression: "zlib" }).catch((e: unknown) => e);
    expect(isRelcastError(fromTrees) && fromTrees.code, String(fromTrees)).toBe("E_INPUT");
    expect((fromTrees as Error).message).toContain("link /Contents/Resources/link has a target that is not valid UTF-8 (a\\xff)");
    const err = await createDelta(t.oldRoot, t.newRoot, t.out, { compression: "zlib" }).catch((e: unknown) => e);
    expect(isRelcastError(err) && err.code, String(err)).toBe("E_INPUT");
    expect((err as Error).message).toContain("which has a target that is not valid UTF-8 (a\\xff)");
    expect(await readdir(path.dirname(t.out))).toEqual(["new", "old"]);
  });
});
