import { mkdir, rm, stat } from "node:fs/promises";
import path from "node:path";
import { RelcastError } from "../../core/errors.js";
import { parseStoredJson } from "../../core/stored-json.js";
import { releaseRecordSchema, type ReleaseRecord } from "../../domain/record-schema.js";
import { deltaFileName, recordKey, versionedKey } from "../../domain/release-layout.js";
import { applyDeltaToTree } from "../../sparkle/delta/delta-apply-tree.js";
import { limitsForNewTree } from "../../sparkle/delta/delta-limits.js";
import { compressionUnavailable, defaultCompression, missingProgramError } from "../../sparkle/delta/delta-codec.js";
import { compressionName, type CompressionName } from "../../sparkle/delta/delta-format.js";
import { createDeltaFromTrees, DEFAULT_DIFF_LIMIT_BYTES } from "../../sparkle/delta/delta-create.js";
import { writeTreeManifest } from "../../sparkle/delta/tree-manifest-writer.js";
import { wholeFilesNotes } from "../../sparkle/delta/whole-files-note.js";
import { type ContentHashLookup, openZipBundleTree, type ZipBundleTree } from "../../sparkle/delta/zip-bundle-tree.js";
import { signEd25519, verifyEd25519 } from "../../sparkle/ed25519-stream.js";
import { digestFile } from "../../core/file-digest.js";
import type { ObjectStore } from "../../store/object-store.js";
import { need, type DeltaArtifact, type ReleaseContext } from "../release-context.js";
import type { Step } from "../step.js";
import { deltaCandidates } from "./delta-candidates.js";
import { openOldTree } from "./old-tree.js";

export const DEFAULT_MAXIMUM_DELTAS = 5;
/**
 * Old trees held and deltas made at once, for a new tree of `entries` entries. Two overlap (one reads while
 * the other waits on xz or the patcher: the bench's five deltas take about 0.38× the zip step so, on two
 * cores), as long as an old tree is small; from {@link ONE_AT_A_TIME_FROM} entries one at a time, each old
 * tree (its entries, hashes and manifest table) let go before the next is read, so a bundle of many files
 * holds one old tree, not two (a 70,000-file second publish: 278 MB peak). RELCAST_DELTA_CONCURRENCY sets it.
 */
export const ONE_AT_A_TIME_FROM = 20_000;
export function deltaConcurrency(entries: number): number {
  const set = Number(process.env.RELCAST_DELTA_CONCURRENCY);
  if (Number.isInteger(set) && set >= 1) return set;
  return entries >= ONE_AT_A_TIME_FROM ? 1 : 2;
}


async function readRecord(store: ObjectStore, version: string): Promise<ReleaseRecord> {
  const got = await store.get(recordKey(version));
  const where = store.uriFor(recordKey(version));
  if (!got) throw new RelcastError("E_VERIFY", `${where} is missing, but the catalog lists ${version}`, "run `relcast verify`; publish with --no-deltas to skip deltas meanwhile");
  const record = parseStoredJson(got.body, releaseRecordSchema);
  if (!record) throw new RelcastError("E_VERIFY", `${where} is not a valid release record`, "run `relcast verify`; publish with --no-deltas to skip deltas meanwhile");
  return record;
}

/** The compression byte of a stored delta (undefined when it is missing or not a delta: the re-run then remakes it). */
async function storedCompression(store: ObjectStore, version: string, fileName: string): Promise<CompressionName | undefined> {
  const got = await store.getStream(versionedKey(version, fileName), { start: 0, end: 5 });
  if (!got) return undefined;
  const chunks: Buffer[] = [];
  try {
    for await (const chunk of got.stream) {
      chunks.push(chunk as Buffer);
      if (Buffer.concat(chunks).length >= 6) break;
    }
  } finally {
    got.stream.destroy();
  }
  const head = Buffer.concat(chunks);
  return head.length >= 6 && head.toString("latin1", 0, 4) === "spk!" ? compressionName(head[4]!) : undefined;
}

/**
 * The zip step's content hashes, taken out of the context: they are used once, for the new tree, and the later
 * steps have no use for them. Held in a box the deltas step empties once the tree is read: for 100,000 files they
 * are a table of about 10 MB, which a local of the step would keep alive through the manifest and every delta.
 */
function takeContentHashes(ctx: ReleaseContext): { given: ContentHashLookup | undefined } {
  const { contentHashes, ...zip } = need(ctx.zip, "zip");
  ctx.zip = zip;
  return { given: contentHashes };
}

/** Runs `fn` over `items`, `limit` at a time, answering the results in the items' order; all settle before a failure is thrown. */
async function inOrderPool<T, R>(items: readonly T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  let failure: { error: unknown } | undefined;
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      while (next < items.length && !failure) {
        const i = next++;
        try {
          results[i] = await fn(items[i]!);
        } catch (error) {
          failure ??= { error };
        }
      }
    }),
  );
  if (failure) throw failure.error;
  return results;
}

/**
 * Sparkle delta updates from older releases to this one (plan phase: files in
 * the work folder, nothing written to the store). Each delta is applied back
 * to its old tree by relcast's applier and must give this release's tree
 * hash; it is kept only when at most 7/8 of the zip, as generate_appcast does.
 * The same read of the new zip gives this release's tree manifest, stored
 * beside its record, from which later publishes make their deltas without
 * reading this zip again. A publish that makes no delta (the store's first
 * release, `--no-deltas`) does not read its zip for a manifest: that would
 * add a whole pass over the zip to every such publish, where the cost of
 * going without is one old zip read by each of the next few publishes.
 */
export const deltasStep: Step = {
  name: "deltas",
  skip(ctx) {
    // A re-run of a published version completes it: the deltas its record names are remade whatever the flags say.
    if (ctx.existingRecord?.autoupdate?.deltas?.length) return false;
    if (ctx.inputs.noDeltas) return "--no-deltas";
    if ((ctx.config.deltas?.maximum ?? DEFAULT_MAXIMUM_DELTAS) === 0) return "deltas.maximum is 0";
    return false;
  },
  async run(ctx) {
    const { config, inputs } = ctx;
    const hashes = takeContentHashes(ctx);
    const zip = need(ctx.zip, "zip");
    const build = need(ctx.buildNumber, "build number");
    const maximum = config.deltas?.maximum ?? DEFAULT_MAXIMUM_DELTAS;
    // Unset: lzma (smallest) where xz is on the PATH, zlib (built into Node, Sparkle reads it) elsewhere; a re-run
    // keeps the compression its stored deltas have, whatever this machine has, so it remakes the same bytes.
    const existingDeltas = ctx.existingRecord?.autoupdate?.deltas ?? [];
    const stored = config.deltas?.compression || existingDeltas.length === 0 ? undefined : await storedCompression(ctx.store, inputs.version, deltaFileName(config.pluginId, inputs.version, existingDeltas[0]!.fromVersion));
    const compression = config.deltas?.compression ?? stored ?? defaultCompression();
    const unavailable = compressionUnavailable(compression);
    if (unavailable && stored) {
      throw new RelcastError(
        "E_INPUT",
        `${inputs.version} is already published with ${stored} deltas; a re-run remakes them to check them, and ${unavailable}`,
        `re-run where ${stored === "lzma" ? "xz" : "bzip2"} is installed (macOS: brew install ${stored === "lzma" ? "xz" : "bzip2"}); nothing was written`,
      );
    }
    if (unavailable) throw missingProgramError(compression);
    const diffLimitBytes = config.deltas?.diffLimitMiB === undefined ? DEFAULT_DIFF_LIMIT_BYTES : Math.floor(config.deltas.diffLimitMiB * 1048576);
    ctx.deltas = [];

    // A re-run of a published version remakes exactly the deltas its record names.
    const existing = ctx.existingRecord?.autoupdate;
    const candidates: Array<{ version: string; build: string }> = existing
      ? (existing.deltas ?? []).map((d) => ({ version: d.fromVersion, build: String(d.fromBuild) }))
      : deltaCandidates(ctx.catalog?.entries ?? [], { version: inputs.version, build, channel: config.channel }, maximum).map((e) => ({ version: e.version, build: e.build! }));
    // A first release makes no delta but stores its tree manifest all the same (from the zip step's hashes, no
    // second read), so the next publish's delta from it reads only the changed files. Not for a re-run of a
    // published version: its objects are what its first publish wrote.
    if (candidates.length === 0 && (ctx.existingRecord || !hashes.given)) {
      ctx.logger.info("no older release to make a delta from");
      return;
    }

    const root = path.join(ctx.workDir, "deltas");
    await mkdir(root, { recursive: true });
    // The new tree, shared by every delta and the manifest: its content hashes as the zip step took them while
    // zipping (read from the zip, in place, only when the zip came from elsewhere).
    const opening = openZipBundleTree(zip.file, { contentHashes: hashes.given });
    hashes.given = undefined;
    const newTree = await opening;
    try {
      const manifestFile = path.join(root, "tree.json");
      const manifest = await writeTreeManifest(newTree, inputs.version, zip, manifestFile);
      if (manifest) {
        ctx.treeManifest = { file: manifestFile, ...manifest };
      } else {
        ctx.logger.warn("no tree manifest for this release (a link target is not UTF-8, or the bundle has a resource-fork icon): later deltas from it read its zip");
      }
      if (candidates.length === 0) {
        ctx.logger.info("no older release to make a delta from");
        return;
      }
      const newHash = newTree.hash.toString("hex");
      const makeOne = async (candidate: { version: string; build: string }): Promise<{ delta: DeltaArtifact; log: string; notes?: string[] } | { log: string; notes?: string[] }> => {
        const record = await readRecord(ctx.store, candidate.version);
        if (String(record.autoupdate?.buildNumber) !== candidate.build) {
          throw new RelcastError("E_VERIFY", `the catalog says ${candidate.version} is build ${candidate.build}, its record says ${record.autoupdate?.buildNumber}`, "run `relcast verify` and `relcast rebuild`");
        }
        const work = path.join(root, `from-${candidate.version}`);
        await mkdir(work);
        try {
          const oldTree = await openOldTree(ctx.store, record, newTree, work, diffLimitBytes, (line) => ctx.logger.warn(line)).catch((err: unknown) => {
            // An old zip that relcast's readers refuse as a bundle (a name or link today's rules refuse, published
            // before they did) can be no delta's base: that delta is skipped with a warning, not every later publish
            // blocked. A re-run must remake the deltas its record names, so there it stays an error.
            if (existing || !(err instanceof RelcastError) || err.code !== "E_INPUT") throw err;
            return err;
          });
          if (oldTree instanceof RelcastError) {
            const line = `delta from ${candidate.version} skipped: its zip cannot be a delta base (${oldTree.message}); \`relcast verify\` names what it breaks`;
            ctx.logger.warn(line);
            return { log: line };
          }
          try {
            const fileName = deltaFileName(config.pluginId, inputs.version, candidate.version);
            const file = path.join(root, fileName);
            const made = await createDeltaFromTrees(oldTree, newTree, file, { compression, diffLimitBytes, tmpDir: work });
            if (made.afterHash !== newHash) throw new Error(`pipeline bug: delta from ${candidate.version} targets ${made.afterHash}, not ${newHash}`);
            const notes = wholeFilesNotes(made).map((line) => `delta from ${candidate.version}: ${line}`);
            if (Math.floor(made.size / 7) > Math.floor(zip.sizeBytes / 8) && !existing) {
              await rm(file, { force: true });
              return { log: `delta from ${candidate.version}: ${made.size} bytes is more than 7/8 of the ${zip.sizeBytes}-byte zip; not kept`, notes };
            }
            // Applied back by relcast's applier (a module apart from the creator) to the old tree read from its zip.
            const applied = await applyDeltaToTree(oldTree, file, { limits: limitsForNewTree(newTree) });
            if (applied.afterHash !== newHash) {
              throw new RelcastError("E_INTERNAL", `the delta from ${candidate.version} did not rebuild ${inputs.version} (tree hash ${applied.afterHash}, expected ${newHash})`, "publish with --no-deltas and report this");
            }
            const signature = await signEd25519(ctx.key, { file });
            if (!(await verifyEd25519(ctx.key.publicKey, signature, { file }))) {
              throw new RelcastError("E_SIGNATURE", `the signature of ${fileName} does not verify with the key's own public key`, "the key file is damaged; re-export it with `generate_keys -x`");
            }
            const sizeBytes = (await stat(file)).size;
            const delta: DeltaArtifact = { fromVersion: candidate.version, fromBuild: Number(candidate.build), fileName, file, sizeBytes, sha256: (await digestFile(file)).sha256, edSignature: signature.toString("base64") };
            const c = made.counts;
            return {
              delta,
              notes,
              log:
                `delta from ${candidate.version} (build ${candidate.build}): ${sizeBytes} bytes (${compression}${config.deltas?.compression ? "" : compression === "lzma" ? ", xz found" : ", no xz on the PATH"}), ${Math.round((sizeBytes / zip.sizeBytes) * 1000) / 10}% of the zip; ` +
                `${c.diffed} diffed, ${c.extracted} extracted, ${c.cloned} cloned, ${c.deleted} deleted; ${oldTree.describe()}; applied back: tree hash matches`,
            };
          } finally {
            await oldTree.close();
          }
        } finally {
          await rm(work, { recursive: true, force: true });
        }
      };
      // deltaConcurrency at a time; results are kept in candidate order (highest build first), and every
      // started delta is awaited before the first failure is thrown, so the work folder is removed after them.
      const results = await inOrderPool(candidates, deltaConcurrency(newTree.entries.length), makeOne);
      for (const result of results) {
        ctx.logger.info(result.log);
        for (const note of result.notes ?? []) ctx.logger.info(note);
        if ("delta" in result) ctx.deltas.push(result.delta);
      }
    } finally {
      await newTree.close();
    }
  },
};
