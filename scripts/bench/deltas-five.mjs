// Makes Sparkle deltas from several old release zips to one new zip the way publish's deltas
// step does (new tree read in place once, its tree manifest made; each old release's tree from its
// stored manifest "<old.zip>.tree.json", reading from the old zip by range only the entries a delta
// diffs; or, with RELCAST_BENCH_NO_MANIFESTS=1 or no manifest, each old zip streamed once, checked
// against its SHA-256 in the same pass, unchanged entries compared by their compressed bytes; diff,
// compress, apply back in memory, check the tree hash), for the delta bench. The new tree comes from
// "<new.zip>.hashes.json" (each file's and link's SHA-1 by entry name, as the zip step hands them to the
// deltas step) when it exists and RELCAST_BENCH_NO_ZIP_HASHES is not 1; otherwise the new zip is read whole.
// usage: node deltas-five.mjs <new.zip> <work dir> <old.zip>...
import { createHash } from "node:crypto";
import { createReadStream } from "node:fs";
import { mkdir, open, readFile, rm, stat, writeFile } from "node:fs/promises";
import path from "node:path";
import { applyDeltaToTree } from "../../dist/src/sparkle/delta/delta-apply-tree.js";
import { createDeltaFromTrees, DEFAULT_DIFF_LIMIT_BYTES } from "../../dist/src/sparkle/delta/delta-create.js";
import { readStoredZipTree } from "../../dist/src/sparkle/delta/stored-zip-tree.js";
import { deltaConcurrency } from "../../dist/src/steps/deltas/index.js";
import { openZipBundleTree } from "../../dist/src/sparkle/delta/zip-bundle-tree.js";
import { serializeTreeManifest, treeManifestOf } from "../../dist/src/sparkle/delta/tree-manifest.js";
import { readManifestTable } from "../../dist/src/sparkle/delta/manifest-table.js";
import { treeFromManifest } from "../../dist/src/sparkle/delta/manifest-tree.js";

const [newZip, work, ...oldZips] = process.argv.slice(2);
await mkdir(work, { recursive: true });
// Each old zip's SHA-256 and size as its record holds them: "<old.zip>.sha256" (written by bench.mjs), or worked out here.
const expected = [];
for (const oldZip of oldZips) {
  const sidecar = await readFile(`${oldZip}.sha256`, "utf8").catch(() => undefined);
  const sha256 = sidecar?.trim() ?? createHash("sha256").update(await readFile(oldZip)).digest("hex");
  expected.push({ sha256, sizeBytes: (await stat(oldZip)).size });
}
const useManifests = process.env.RELCAST_BENCH_NO_MANIFESTS !== "1";
// RELCAST_BENCH_PHASES=1: seconds of each phase on stderr.
const phase = (name, since) => process.env.RELCAST_BENCH_PHASES === "1" && process.stderr.write(`${name} ${((performance.now() - since) / 1000).toFixed(2)} s\n`);
const t0 = performance.now();
const hashesJson = process.env.RELCAST_BENCH_NO_ZIP_HASHES === "1" ? undefined : await readFile(`${newZip}.hashes.json`, "utf8").catch(() => undefined);
const contentHashes = hashesJson ? new Map(Object.entries(JSON.parse(hashesJson)).map(([name, hex]) => [name, Buffer.from(hex, "hex")])) : undefined;
const newTree = await openZipBundleTree(newZip, { contentHashes });
phase("new tree", t0);
// This release's manifest, as the deltas step makes it for the store (publish has the zip's SHA-256 from the zip step).
await writeFile(path.join(work, "tree.json"), serializeTreeManifest(await treeManifestOf(newTree, "new", { sha256: "0".repeat(64), sizeBytes: (await stat(newZip)).size })));
const sizes = [];
async function oldTreeOf(i, oldZip, dir) {
  const stored = useManifests ? await readFile(`${oldZip}.tree.json`).catch(() => undefined) : undefined;
  if (stored) {
    const { table, tree } = readManifestTable(stored, `${oldZip}.tree.json`);
    const fh = await open(oldZip, "r");
    const readRange = async (start, end) => {
      const out = Buffer.alloc(end - start + 1);
      const { bytesRead } = await fh.read(out, 0, out.length, start);
      return out.subarray(0, bytesRead);
    };
    const t = await treeFromManifest(table, tree, { name: oldZip, readRange, scratchFile: path.join(dir, "changed-files") });
    return { ...t, close: async () => { await t.close(); await fh.close(); } };
  }
  return readStoredZipTree(createReadStream(oldZip, { highWaterMark: 1 << 20 }), { name: oldZip, newZip: newTree, spillFile: path.join(dir, "changed-files"), keepLimit: DEFAULT_DIFF_LIMIT_BYTES, expected: expected[i] });
}
async function one(i, oldZip) {
  const dir = path.join(work, `old-${i}`);
  await mkdir(dir);
  const t1 = performance.now();
  const oldTree = await oldTreeOf(i, oldZip, dir);
  phase(`old tree ${i}`, t1);
  const file = path.join(work, `from-${i}.delta`);
  const t2 = performance.now();
  const made = await createDeltaFromTrees(oldTree, newTree, file, { compression: "lzma", tmpDir: dir });
  phase(`create ${i} (${JSON.stringify(made.counts)})`, t2);
  const t3 = performance.now();
  const applied = await applyDeltaToTree(oldTree, file, { tmpDir: dir });
  phase(`apply ${i}`, t3);
  if (applied.afterHash !== newTree.hash.toString("hex") || made.afterHash !== applied.afterHash) throw new Error(`delta ${i} did not rebuild the new tree`);
  sizes[i] = (await stat(file)).size;
  await oldTree.close();
  await rm(dir, { recursive: true, force: true });
}
// As the deltas step does: deltaConcurrency old zips at once.
let next = 0;
await Promise.all(Array.from({ length: deltaConcurrency(newTree.entries.length) }, async () => {
  while (next < oldZips.length) {
    const i = next++;
    await one(i, oldZips[i]);
  }
}));
await newTree.close();
process.stdout.write(`${sizes.join(" ")}\n`);
