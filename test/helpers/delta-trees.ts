import { randomBytes } from "node:crypto";
import { chmod, mkdir, readdir, readFile, readlink, lstat, symlink, writeFile } from "node:fs/promises";
import path from "node:path";

function seeded(seed: number): (n: number) => Buffer {
  let s = seed >>> 0;
  return (n) => {
    const out = Buffer.alloc(n);
    for (let i = 0; i < n; i++) {
      s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
      out[i] = s >>> 24;
    }
    return out;
  };
}

/** A binary-looking file: random bytes with repeated runs, so bsdiff has something to match. */
export function binaryish(size: number, seed: number): Buffer {
  const bytes = seeded(seed);
  const block = bytes(512);
  const out = Buffer.alloc(size);
  for (let at = 0; at < size; at += 512) (at % 2048 === 0 ? bytes(512) : block).copy(out, at);
  return out;
}

/** One entry of a test tree: a file (bytes and mode) or a symlink (target). */
type Spec = [rel: string, data: Buffer | string, mode?: number] | [rel: string, { link: string }];

async function build(root: string, specs: readonly Spec[]): Promise<void> {
  for (const [rel, data, mode] of specs) {
    const abs = path.join(root, rel);
    await mkdir(path.dirname(abs), { recursive: true });
    if (typeof data === "object" && "link" in data) {
      await symlink(data.link, abs);
      continue;
    }
    await writeFile(abs, data);
    await chmod(abs, mode ?? 0o644);
  }
}

/**
 * Two bundles covering every kind of change a delta carries: added, removed,
 * changed (diffed and small), moved unchanged (clone), moved and changed (clone
 * + diff), a framework Versions/A → B move, permission changes, symlinks added,
 * changed and removed, a file turned into a folder and a folder into a file,
 * and a large changed file for the whole-file limit.
 */
export async function makeDeltaTrees(dir: string): Promise<{ oldRoot: string; newRoot: string }> {
  const oldRoot = path.join(dir, "old", "Demo.bundle");
  const newRoot = path.join(dir, "new", "Demo.bundle");
  const exe = binaryish(200_000, 1);
  const exe2 = Buffer.from(exe);
  for (let i = 5000; i < 5100; i++) exe2[i] = exe2[i]! ^ 0x5a;
  exe2.write("version two", 100_000);
  const big = binaryish(300_000, 2);
  const big2 = Buffer.concat([big.subarray(0, 150_000), randomBytes(1000), big.subarray(150_000)]);
  const moved = binaryish(50_000, 3);
  const movedChanged = binaryish(60_000, 4);
  const movedChanged2 = Buffer.from(movedChanged);
  movedChanged2.write("edited", 30_000);
  const fw = binaryish(40_000, 5);
  const fw2 = Buffer.from(fw);
  fw2.write("framework B", 20_000);
  const kit = "Contents/Frameworks/Kit.framework";

  await build(oldRoot, [
    ["Contents/Info.plist", "<plist>1.0</plist>\n"],
    ["Contents/MacOS/Demo", exe, 0o755],
    ["Contents/Resources/big.bin", big],
    ["Contents/Resources/old-place/moved.bin", moved],
    ["Contents/Resources/a/assets.dat", movedChanged],
    ["Contents/Resources/removed.txt", "bye\n"],
    ["Contents/Resources/removed-dir/one.txt", "1\n"],
    ["Contents/Resources/removed-dir/deeper/two.txt", "2\n"],
    ["Contents/Resources/chmod-me.sh", "#!/bin/sh\necho hi\n", 0o644],
    ["Contents/Resources/chmod-big.bin", binaryish(10_000, 6), 0o644],
    ["Contents/Resources/becomes-folder", "I am a file\n"],
    ["Contents/Resources/becomes-file/inner.txt", "inner\n"],
    ["Contents/Resources/small.txt", "small v1\n"],
    [`${kit}/Versions/A/Kit`, fw, 0o755],
    [`${kit}/Versions/Current`, { link: "A" }],
    [`${kit}/Kit`, { link: "Versions/Current/Kit" }],
    ["Contents/Resources/link-changes", { link: "small.txt" }],
    ["Contents/Resources/link-removed", { link: "small.txt" }],
  ]);
  await build(newRoot, [
    ["Contents/Info.plist", "<plist>2.0</plist>\n"],
    ["Contents/MacOS/Demo", exe2, 0o755],
    ["Contents/Resources/big.bin", big2],
    ["Contents/Resources/new-place/moved.bin", moved],
    ["Contents/Resources/b/assets.dat", movedChanged2],
    ["Contents/Resources/added.txt", "hello\n"],
    ["Contents/Resources/added-dir/deep/new.bin", binaryish(9000, 7)],
    ["Contents/Resources/chmod-me.sh", "#!/bin/sh\necho hi\n", 0o755],
    ["Contents/Resources/chmod-big.bin", binaryish(10_000, 6), 0o600],
    ["Contents/Resources/becomes-folder/child.txt", "now a folder\n"],
    ["Contents/Resources/becomes-file", "now a file\n"],
    ["Contents/Resources/small.txt", "small v2, a bit longer\n"],
    [`${kit}/Versions/B/Kit`, fw2, 0o755],
    [`${kit}/Versions/Current`, { link: "B" }],
    [`${kit}/Kit`, { link: "Versions/Current/Kit" }],
    ["Contents/Resources/link-changes", { link: "added.txt" }],
    ["Contents/Resources/link-added", { link: "../Info.plist" }],
  ]);
  await chmod(path.join(newRoot, "Contents/Resources/becomes-folder"), 0o750);
  return { oldRoot, newRoot };
}

/** Every entry below root: kind, permissions and bytes (or link target), for exact comparison. */
export async function describeTree(root: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  async function walk(abs: string, rel: string): Promise<void> {
    for (const name of (await readdir(abs)).sort()) {
      const a = path.join(abs, name);
      const r = `${rel}/${name}`;
      const st = await lstat(a);
      if (st.isSymbolicLink()) out[r] = `link ${await readlink(a)}`;
      else if (st.isDirectory()) {
        out[r] = `dir ${(st.mode & 0o7777).toString(8)}`;
        await walk(a, r);
      } else out[r] = `file ${(st.mode & 0o7777).toString(8)} ${(await readFile(a)).toString("base64")}`;
    }
  }
  await walk(root, "");
  return out;
}
