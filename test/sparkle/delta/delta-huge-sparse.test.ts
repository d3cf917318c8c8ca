import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdir, mkdtemp, open, rm, truncate, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { applyDeltaToTree } from "../../../src/sparkle/delta/delta-apply-tree.js";
import { readDeltaInfo } from "../../../src/sparkle/delta/delta-apply.js";
import { createDelta } from "../../../src/sparkle/delta/delta-create.js";
import { limitsForNewTree } from "../../../src/sparkle/delta/delta-limits.js";
import { hashTree } from "../../../src/sparkle/delta/tree-hash.js";

/**
 * A real 5 GiB changed file (sparse: it costs no disk until the delta's
 * scratch payload is written): shipped whole, past the 4 GiB of a plain zip
 * field and the 2 GiB of a Node buffer, and applied back in memory to the new
 * tree's hash. About two minutes of CPU on two cores (hashing 10 GiB, writing
 * and inflating 5 GiB), so it runs with the other full-size cases under
 * RELCAST_ZIP64_FULL=1 (docs/zip.md); the scaled-down cases are in
 * delta-huge-files.test.ts.
 */
const GiB = 1024 ** 3;
const SIZE = 5 * GiB;
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "relcast-delta-sparse-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function sparseBundle(root: string, change?: { at: number; bytes: Buffer }): Promise<string> {
  await mkdir(path.join(root, "Contents", "Resources"), { recursive: true });
  await writeFile(path.join(root, "Contents", "Info.plist"), "<plist><dict/></plist>\n");
  const file = path.join(root, "Contents", "Resources", "model.gguf");
  await writeFile(file, "");
  await truncate(file, SIZE);
  if (change) {
    const fh = await open(file, "r+");
    await fh.write(change.bytes, 0, change.bytes.length, change.at);
    await fh.close();
  }
  return file;
}

describe.runIf(process.env.RELCAST_ZIP64_FULL === "1")("a changed 5 GiB file", () => {
  it("is shipped whole (zlib), its delta item claims 5 GiB, and applying it in memory gives the new tree, whose file Python hashes", async () => {
    const oldRoot = path.join(dir, "old", "Bridge.bundle");
    const newRoot = path.join(dir, "new", "Bridge.bundle");
    await sparseBundle(oldRoot);
    const changed = await sparseBundle(newRoot, { at: 4.5 * GiB, bytes: randomBytes(1024 * 1024) });
    const [oldTree, newTree] = [await hashTree(oldRoot), await hashTree(newRoot)];
    const pythonSha1 = execFileSync("python3", ["-c", "import hashlib,sys\nh=hashlib.sha1()\nf=open(sys.argv[1],'rb')\nfor b in iter(lambda: f.read(1<<20), b''): h.update(b)\nprint(h.hexdigest())", changed], { encoding: "utf8" }).trim();
    expect(newTree.fileHashes.get("/Contents/Resources/model.gguf")!.toString("hex")).toBe(pythonSha1);

    const delta = path.join(dir, "huge.delta");
    const summary = await createDelta(oldRoot, newRoot, delta, { compression: "zlib", oldTree, newTree, tmpDir: dir });
    expect(summary.overLimit).toEqual([{ rel: "/Contents/Resources/model.gguf", oldSize: SIZE, size: SIZE }]);
    const info = await readDeltaInfo(delta);
    expect(info.items.find((i) => i.rel === "/Contents/Resources/model.gguf")!.dataLength).toBe(SIZE);
    const applied = await applyDeltaToTree(oldTree, delta, { limits: limitsForNewTree(newTree) });
    expect(applied.afterHash).toBe(newTree.hash.toString("hex"));
  }, 600_000);
});
