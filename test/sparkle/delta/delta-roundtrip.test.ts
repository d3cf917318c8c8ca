import { execFileSync } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile, cp } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { applyDelta, readDeltaInfo } from "../../../src/sparkle/delta/delta-apply.js";
import { createDelta } from "../../../src/sparkle/delta/delta-create.js";
import { Command } from "../../../src/sparkle/delta/delta-format.js";
import { hashTree } from "../../../src/sparkle/delta/tree-hash.js";
import { describeTree, makeDeltaTrees } from "../../helpers/delta-trees.js";

const here = path.dirname(fileURLToPath(import.meta.url));
let dir: string;
let oldRoot: string;
let newRoot: string;

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "relcast-delta-test-"));
  ({ oldRoot, newRoot } = await makeDeltaTrees(dir));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const python = (script: string, ...args: string[]): string => execFileSync("python3", [path.join(here, script), ...args], { encoding: "utf8" }).trim();

/**
 * Python's tree hash of the untouched old or new tree (each a few seconds): no test changes those two trees (the
 * hard-link test checks so), so each is computed once and every test compares against that same independent hash.
 */
const pythonHashes = new Map<string, string>();
function pythonTreeHash(root: string): string {
  if (root !== oldRoot && root !== newRoot) throw new Error(`only the unchanging old and new trees are cached, not ${root}`);
  let hash = pythonHashes.get(root);
  if (hash === undefined) pythonHashes.set(root, (hash = python("sparkle-tree-hash.py", root)));
  return hash;
}

describe("Sparkle tree hash", () => {
  it("equals an independent Python implementation of SUBinaryDeltaCommon's hash, for both trees", async () => {
    expect((await hashTree(oldRoot)).hash.toString("hex")).toBe(pythonTreeHash(oldRoot));
    expect((await hashTree(newRoot)).hash.toString("hex")).toBe(pythonTreeHash(newRoot));
  });

  it("changes with a permission bit, a link target or a folder's mode, and ignores a symlink's own mode", async () => {
    const copy = path.join(dir, "hash-copy");
    await cp(oldRoot, copy, { recursive: true, verbatimSymlinks: true });
    const base = (await hashTree(copy)).hash.toString("hex");
    execFileSync("chmod", ["600", path.join(copy, "Contents/Info.plist")]);
    const changed = (await hashTree(copy)).hash.toString("hex");
    expect(changed).not.toBe(base);
    expect(changed).toBe(python("sparkle-tree-hash.py", copy));
    await rm(copy, { recursive: true });
  });
});

describe.each(["lzma", "zlib", "bzip2", "none"] as const)("delta with %s compression", (compression) => {
  let delta: string;
  let summary: Awaited<ReturnType<typeof createDelta>>;
  beforeAll(async () => {
    delta = path.join(dir, `demo-${compression}.delta`);
    summary = await createDelta(oldRoot, newRoot, delta, { compression, diffLimitBytes: 250_000 });
  });

  it("carries every kind of item, and applied to the old tree gives the new tree byte for byte", async () => {
    const { header, items } = await readDeltaInfo(delta);
    expect(header).toMatchObject({ compression, majorVersion: 3, minorVersion: 1, beforeHash: summary.beforeHash, afterHash: summary.afterHash });
    const byPath = new Map(items.map((i) => [i.rel, i]));
    const has = (rel: string, bits: number): boolean => ((byPath.get(rel)?.commands ?? 0) & bits) === bits;
    expect(has("/Contents/MacOS/Demo", Command.binaryDiff)).toBe(true);
    expect(has("/Contents/Resources/big.bin", Command.extract)).toBe(true); // 300 KB > the 250 KB limit: shipped whole
    expect(summary.counts.wholeOverLimit).toBe(1);
    expect(has("/Contents/Resources/new-place/moved.bin", Command.clone)).toBe(true);
    expect(byPath.get("/Contents/Resources/new-place/moved.bin")!.clonedFrom).toBe("/Contents/Resources/old-place/moved.bin");
    expect(has("/Contents/Resources/b/assets.dat", Command.clone | Command.binaryDiff)).toBe(true);
    expect(has("/Contents/Frameworks/Kit.framework/Versions/B/Kit", Command.clone | Command.binaryDiff)).toBe(true);
    expect(byPath.get("/Contents/Frameworks/Kit.framework/Versions/B/Kit")!.clonedFrom).toBe("/Contents/Frameworks/Kit.framework/Versions/A/Kit");
    expect(has("/Contents/Resources/removed.txt", Command.delete)).toBe(true);
    expect(has("/Contents/Resources/removed-dir", Command.delete)).toBe(true);
    expect(byPath.get("/Contents/Resources/chmod-me.sh")).toMatchObject({ commands: Command.modifyPermissions, mode: 0o755 });
    expect(byPath.get("/Contents/Resources/chmod-big.bin")).toMatchObject({ commands: Command.modifyPermissions, mode: 0o600 });
    expect(has("/Contents/Resources/becomes-folder", Command.delete | Command.extract)).toBe(true);
    expect(has("/Contents/Resources/becomes-file", Command.delete | Command.extract)).toBe(true);
    expect(byPath.has("/Contents/Resources/becomes-file/inner.txt")).toBe(false); // goes with its folder
    expect(has("/Contents/Resources/link-added", Command.extract)).toBe(true);
    expect(has("/Contents/Resources/link-changes", Command.extract)).toBe(true);
    expect(has("/Contents/Resources/link-removed", Command.delete)).toBe(true);
    expect(byPath.get("/Contents/Resources/link-added")!.mode).toBe(0o120755);
    // Diff items come after every other item, as Sparkle writes them.
    const firstDiff = items.findIndex((i) => i.commands & Command.binaryDiff);
    expect(items.slice(firstDiff).every((i) => i.commands & Command.binaryDiff)).toBe(true);

    const out = path.join(dir, `applied-${compression}`, "Demo.bundle");
    const result = await applyDelta(oldRoot, out, delta);
    expect(result.header.afterHash).toBe(summary.afterHash);
    expect(await describeTree(out)).toEqual(await describeTree(newRoot));
    expect(python("sparkle-tree-hash.py", out)).toBe(summary.afterHash);
  });

  it("has a container Python's own lzma/zlib/bz2 modules read, with the header Sparkle expects", async () => {
    const parsed = JSON.parse(python("read-delta.py", delta)) as { compression: number; metadata: number; major: number; minor: number; before: string; after: string; paths: string[] };
    expect(parsed).toMatchObject({ compression: { none: 0, bzip2: 1, lzma: 2, zlib: 5 }[compression], metadata: { none: 0, bzip2: 9, lzma: 6, zlib: 9 }[compression], major: 3, minor: 1 });
    expect(parsed.before).toBe(pythonTreeHash(oldRoot));
    expect(parsed.after).toBe(pythonTreeHash(newRoot));
    expect(parsed.paths).toContain("/Contents/MacOS/Demo");
  });
});

describe("applying onto hard links of an already hashed old tree (publish and verify)", () => {
  it("gives the same tree, and leaves every file of the old tree as it was (content and mode)", async () => {
    const delta = path.join(dir, "linked.delta");
    const oldTree = await hashTree(oldRoot);
    await createDelta(oldRoot, newRoot, delta, { compression: "none", diffLimitBytes: 250_000, oldTree });
    const before = await describeTree(oldRoot);
    const out = path.join(dir, "linked-out", "Demo.bundle");
    await applyDelta(oldRoot, out, delta, { oldTree });
    expect(await describeTree(out)).toEqual(await describeTree(newRoot));
    expect(await describeTree(oldRoot)).toEqual(before);
    expect(python("sparkle-tree-hash.py", out)).toBe((await hashTree(newRoot)).hash.toString("hex"));
  });
});

describe("applying refuses bad input and leaves nothing behind", () => {
  let delta: string;
  beforeAll(async () => {
    delta = path.join(dir, "refuse.delta");
    await createDelta(oldRoot, newRoot, delta, { compression: "none" });
  });

  it("refuses a tree that is not the delta's old tree", async () => {
    const out = path.join(dir, "wrong-old-out");
    await expect(applyDelta(newRoot, out, delta)).rejects.toThrow(/not the bundle this delta was made from/);
    await expect(readFile(out)).rejects.toThrow(/ENOENT/);
  });

  it("refuses a damaged delta and removes its partial output", async () => {
    const bytes = await readFile(delta);
    const damaged = path.join(dir, "damaged.delta");
    const copy = Buffer.from(bytes);
    copy[copy.length - 10] = copy[copy.length - 10]! ^ 0xff; // inside the last file's data: the result's hash fails
    await writeFile(damaged, copy);
    const out = path.join(dir, "damaged-out");
    await expect(applyDelta(oldRoot, out, damaged)).rejects.toThrow(/tree hash|Corrupt/);
    await expect(readFile(out)).rejects.toThrow(/ENOENT/);
    await writeFile(damaged, Buffer.concat([Buffer.from("nope"), bytes.subarray(4)]));
    await expect(applyDelta(oldRoot, out, damaged)).rejects.toThrow(/does not start with "spk!"/);
  });

  it("refuses a path with '..' in the item table", async () => {
    const bytes = await readFile(delta);
    const at = bytes.indexOf(Buffer.from("/Contents/Resources/added.txt\0"));
    expect(at).toBeGreaterThan(0);
    const evil = Buffer.from(bytes);
    evil.write("/Contents/../../../etc/x.txt", at, "latin1");
    const file = path.join(dir, "evil.delta");
    await writeFile(file, evil);
    await expect(applyDelta(oldRoot, path.join(dir, "evil-out"), file)).rejects.toThrow(/unsafe path/);
  });

  it("refuses an existing output folder", async () => {
    await expect(applyDelta(oldRoot, newRoot, delta)).rejects.toThrow(/already exists/);
  });
});

describe("identical trees", () => {
  it("give an empty delta that applies to a copy", async () => {
    const delta = path.join(dir, "same.delta");
    const s = await createDelta(oldRoot, oldRoot, delta, { compression: "lzma" });
    expect(s.beforeHash).toBe(s.afterHash);
    expect((await readDeltaInfo(delta)).items).toEqual([]);
    const out = path.join(dir, "same-out");
    await applyDelta(oldRoot, out, delta);
    expect(await describeTree(out)).toEqual(await describeTree(oldRoot));
  });
});
