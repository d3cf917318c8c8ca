// Makes Sparkle deltas from several old release zips to one new zip the way publish's deltas
// step does (unpack, hash, diff, compress, apply back, check the tree hash), for the delta bench.
// usage: node deltas-five.mjs <new.zip> <work dir> <old.zip>...
import { mkdir, rm, stat } from "node:fs/promises";
import path from "node:path";
import { applyDelta } from "../../dist/src/sparkle/delta/delta-apply.js";
import { createDelta } from "../../dist/src/sparkle/delta/delta-create.js";
import { hashTree } from "../../dist/src/sparkle/delta/tree-hash.js";
import { extractBundleZip } from "../../dist/src/sparkle/delta/zip-tree.js";

const [newZip, work, ...oldZips] = process.argv.slice(2);
await mkdir(work, { recursive: true });
const newRoot = await extractBundleZip(newZip, path.join(work, "new"));
const newTree = await hashTree(newRoot);
const sizes = [];
for (const [i, oldZip] of oldZips.entries()) {
  const dir = path.join(work, `old-${i}`);
  const oldRoot = await extractBundleZip(oldZip, dir);
  const file = path.join(work, `from-${i}.delta`);
  const oldTree = await hashTree(oldRoot);
  const made = await createDelta(oldRoot, newRoot, file, { compression: "lzma", newTree, oldTree, tmpDir: work });
  const applied = await applyDelta(oldRoot, path.join(work, `applied-${i}`), file, { tmpDir: work, oldTree });
  if (applied.header.afterHash !== newTree.hash.toString("hex")) throw new Error(`delta ${i} did not rebuild the new tree`);
  sizes.push((await stat(file)).size);
  await rm(dir, { recursive: true, force: true });
  await rm(path.join(work, `applied-${i}`), { recursive: true, force: true });
  void made;
}
process.stdout.write(`${sizes.join(" ")}\n`);
