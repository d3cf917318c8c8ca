import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { createReadStream, mkdirSync, writeFileSync } from "node:fs";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { applyDelta } from "../../../src/sparkle/delta/delta-apply.js";
import { applyDeltaToTree } from "../../../src/sparkle/delta/delta-apply-tree.js";
import { limitsForNewTree } from "../../../src/sparkle/delta/delta-limits.js";
import { createDeltaFromTrees } from "../../../src/sparkle/delta/delta-create.js";
import { readStoredZipTree } from "../../../src/sparkle/delta/stored-zip-tree.js";
import { hashTree } from "../../../src/sparkle/delta/tree-hash.js";
import { openZipBundleTree } from "../../../src/sparkle/delta/zip-bundle-tree.js";
import { extractBundleZip } from "../../../src/sparkle/delta/zip-tree.js";
import { zipBundle } from "../../../src/steps/zip/reproducible-zip.js";

/**
 * The delta maker and both appliers read ZIP64 zips: relcast's own (over
 * 65,535 entries: ZIP64 end record and locator) and Python's (a ZIP64 extra
 * field in every local header, as relcast writes for a file of 4 GiB or
 * more), streamed from the old release as publish streams them. Zips with
 * real 4 GiB files are in test/steps/zip/zip64.test.ts; here the ZIP64
 * fields come from an independent writer at a size that keeps the test fast.
 */
let dir: string;
const sha256 = async (file: string) => {
  const bytes = await readFile(file);
  return { sha256: createHash("sha256").update(bytes).digest("hex"), sizeBytes: bytes.length };
};

/** A bundle of `count` small files in folders of 1,000 (written synchronously: 66,000 promises cost more than the writes). */
function manyFiles(root: string, count: number, changed: (i: number) => boolean): string {
  const bundle = path.join(root, "Many.bundle");
  mkdirSync(path.join(bundle, "Contents"), { recursive: true });
  writeFileSync(path.join(bundle, "Contents/Info.plist"), "<plist><dict/></plist>\n");
  for (let i = 0; i < count; i++) {
    const folder = path.join(bundle, "Contents/Resources", `d${String(Math.floor(i / 1000)).padStart(2, "0")}`);
    if (i % 1000 === 0) mkdirSync(folder, { recursive: true });
    writeFileSync(path.join(folder, `f${String(i % 1000).padStart(4, "0")}.txt`), changed(i) ? `changed ${i}\n`.repeat(600) : `${i}\n`);
  }
  return bundle;
}

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "relcast-delta-zip64-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("deltas between ZIP64 zips", () => {
  // Minutes of CPU on two cores: with the other full-size ZIP64 cases under RELCAST_ZIP64_FULL=1 (docs/zip.md).
  it.runIf(process.env.RELCAST_ZIP64_FULL === "1")("over 65,535 entries: the old zip streamed and checked, a delta made and applied back to the new tree", async () => {
    const count = 65_600;
    const oldZip = (await zipBundle(manyFiles(path.join(dir, "old"), count, () => false), path.join(dir, "old.zip"))).file;
    const newZip = (await zipBundle(manyFiles(path.join(dir, "new"), count, (i) => i % 9000 === 7), path.join(dir, "new.zip"))).file;
    const newTree = await openZipBundleTree(newZip);
    try {
      expect(newTree.entries.filter((e) => e.kind === "file")).toHaveLength(count + 1);
      const work = path.join(dir, "work");
      await mkdir(work);
      const old = await readStoredZipTree(createReadStream(oldZip), { name: oldZip, newZip: newTree, spillFile: path.join(work, "spill"), keepLimit: 1 << 20, expected: await sha256(oldZip) });
      try {
        expect(old.entries).toHaveLength(newTree.entries.length);
        expect(old.reused).toBeGreaterThan(count - 20);
        const delta = path.join(dir, "many.delta");
        const made = await createDeltaFromTrees(old, newTree, delta, { compression: "lzma", tmpDir: work });
        expect(made.counts.diffed).toBe(8);
        expect(made.afterHash).toBe(newTree.hash.toString("hex"));
        expect((await applyDeltaToTree(old, delta, { limits: limitsForNewTree(newTree) })).afterHash).toBe(made.afterHash);
      } finally {
        await old.close();
      }
    } finally {
      await newTree.close();
    }
  });

  it("reads sizes from ZIP64 extra fields in local headers (a zip Python wrote with force_zip64)", async () => {
    const zip = path.join(dir, "python64.zip");
    const content = Buffer.from("model weights\n".repeat(5000));
    execFileSync("python3", ["-c", `
import sys, zipfile
with zipfile.ZipFile(sys.argv[1], "w", zipfile.ZIP_DEFLATED) as z:
    for name, data, mode in [("P.bundle/", b"", 0o40755), ("P.bundle/Contents/", b"", 0o40755), ("P.bundle/Contents/Info.plist", b"<plist/>", 0o100644), ("P.bundle/Contents/model.bin", sys.stdin.buffer.read(), 0o100644)]:
        info = zipfile.ZipInfo(name, (1980, 1, 1, 0, 0, 0))
        info.external_attr = mode << 16
        info.create_system = 3
        if name.endswith("/"):
            z.writestr(info, b"")
        else:
            info.compress_type = zipfile.ZIP_DEFLATED
            with z.open(info, "w", force_zip64=True) as f:
                f.write(data)
`, zip], { input: content });
    // Python marks both sizes 0xffffffff in each file's local header and puts them in a ZIP64 extra field.
    const bytes = await readFile(zip);
    const model = bytes.indexOf("P.bundle/Contents/model.bin") - 30;
    expect(bytes.readUInt32LE(model + 22)).toBe(0xffffffff);
    await mkdir(path.join(dir, "python64-work"));
    const tree = await readStoredZipTree(createReadStream(zip), { name: zip, spillFile: path.join(dir, "python64-work", "spill"), keepLimit: 1 << 20, expected: await sha256(zip) });
    try {
      const file = tree.entries.find((e) => e.rel === "/Contents/model.bin")!;
      expect(file.size).toBe(content.length);
      expect(tree.fileHashes.get("/Contents/model.bin")!.equals(createHash("sha1").update(content).digest())).toBe(true);
      // The disk applier's reader (yauzl) unpacks it to the same tree; a delta from it applies on disk.
      const unpacked = await extractBundleZip(zip, path.join(dir, "python64"));
      expect(tree.hash.equals((await hashTree(unpacked)).hash)).toBe(true);
      const newRoot = path.join(dir, "python64-new", "P.bundle");
      await mkdir(path.join(newRoot, "Contents"), { recursive: true });
      await writeFile(path.join(newRoot, "Contents/Info.plist"), "<plist/>");
      await writeFile(path.join(newRoot, "Contents/model.bin"), Buffer.concat([content, Buffer.from("more weights\n")]));
      const delta = path.join(dir, "python64.delta");
      const made = await createDeltaFromTrees(tree, await hashTree(newRoot), delta, { compression: "lzma" });
      expect(made.counts.diffed).toBe(1);
      await applyDelta(unpacked, path.join(dir, "python64-applied"), delta);
      expect((await hashTree(path.join(dir, "python64-applied"))).hash.toString("hex")).toBe(made.afterHash);
    } finally {
      await tree.close();
    }
  });

  it("refuses a ZIP64 end record that does not describe the central directory", async () => {
    const zip = path.join(dir, "python64.zip");
    const bytes = Buffer.from(await readFile(zip));
    // Python wrote a classic end record here (small zip): make its entry count lie.
    bytes.writeUInt16LE(bytes.readUInt16LE(bytes.length - 12) + 1, bytes.length - 12);
    const bad = path.join(dir, "bad-end.zip");
    await writeFile(bad, bytes);
    await expect(readStoredZipTree(createReadStream(bad), { name: bad, keepLimit: 0, expected: await sha256(bad) })).rejects.toThrow(/end record does not describe its central directory/);
  });
});
