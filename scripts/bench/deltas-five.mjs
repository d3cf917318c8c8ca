// Makes Sparkle deltas from several old release zips to one new zip the way publish's deltas
// step does (new tree read in place once; each old zip streamed once, checked against its SHA-256
// in the same pass, unchanged entries compared by their compressed bytes; diff, compress, apply
// back in memory, check the tree hash), for the delta bench.
// usage: node deltas-five.mjs <new.zip> <work dir> <old.zip>...
import { createHash } from "node:crypto";
import { createReadStream } from "node:fs";
import { mkdir, readFile, rm, stat } from "node:fs/promises";
import path from "node:path";
import { applyDeltaToTree } from "../../dist/src/sparkle/delta/delta-apply-tree.js";
import { createDeltaFromTrees, DEFAULT_DIFF_LIMIT_BYTES } from "../../dist/src/sparkle/delta/delta-create.js";
import { readStoredZipTree } from "../../dist/src/sparkle/delta/stored-zip-tree.js";
import { DELTA_CONCURRENCY } from "../../dist/src/steps/deltas/index.js";
import { openZipBundleTree } from "../../dist/src/sparkle/delta/zip-bundle-tree.js";

const [newZip, work, ...oldZips] = process.argv.slice(2);
await mkdir(work, { recursive: true });
// Each old zip's SHA-256 and size as its record holds them: "<old.zip>.sha256" (written by bench.mjs), or worked out here.
const expected = [];
for (const oldZip of oldZips) {
  const sidecar = await readFile(`${oldZip}.sha256`, "utf8").catch(() => undefined);
  const sha256 = sidecar?.trim() ?? createHash("sha256").update(await readFile(oldZip)).digest("hex");
  expected.push({ sha256, sizeBytes: (await stat(oldZip)).size });
}
const newTree = await openZipBundleTree(newZip);
const sizes = [];
async function one(i, oldZip) {
  const dir = path.join(work, `old-${i}`);
  await mkdir(dir);
  const oldTree = await readStoredZipTree(createReadStream(oldZip, { highWaterMark: 1 << 20 }), { name: oldZip, newZip: newTree, spillFile: path.join(dir, "changed-files"), keepLimit: DEFAULT_DIFF_LIMIT_BYTES, expected: expected[i] });
  const file = path.join(work, `from-${i}.delta`);
  const made = await createDeltaFromTrees(oldTree, newTree, file, { compression: "lzma", tmpDir: dir });
  const applied = await applyDeltaToTree(oldTree, file, { tmpDir: dir });
  if (applied.afterHash !== newTree.hash.toString("hex") || made.afterHash !== applied.afterHash) throw new Error(`delta ${i} did not rebuild the new tree`);
  sizes[i] = (await stat(file)).size;
  await oldTree.close();
  await rm(dir, { recursive: true, force: true });
}
// As the deltas step does: DELTA_CONCURRENCY old zips at once.
let next = 0;
await Promise.all(Array.from({ length: DELTA_CONCURRENCY }, async () => {
  while (next < oldZips.length) {
    const i = next++;
    await one(i, oldZips[i]);
  }
}));
await newTree.close();
process.stdout.write(`${sizes.join(" ")}\n`);
