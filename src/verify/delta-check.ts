import { mkdir, rm } from "node:fs/promises";
import path from "node:path";
import type { ReleaseRecord } from "../domain/record-schema.js";
import { deltaFileName, versionedKey, zipFileName } from "../domain/release-layout.js";
import { applyDelta } from "../sparkle/delta/delta-apply.js";
import { limitsForNewTree } from "../sparkle/delta/delta-limits.js";
import { hashTree } from "../sparkle/delta/tree-hash.js";
import { extractBundleZip } from "../sparkle/delta/zip-tree.js";
import type { ObjectStore } from "../store/object-store.js";
import { signatureProblem } from "./appcast-reader.js";
import { downloadObject, signatureHolds, type HashTally } from "./download-object.js";

/** Downloads a release's zip, checks it against its record, unpacks it; undefined (with a problem) when it cannot be trusted. */
async function trustedTree(store: ObjectStore, record: ReleaseRecord, pluginId: string, into: string, problems: string[], tally?: HashTally): Promise<string | undefined> {
  const key = versionedKey(record.version, zipFileName(pluginId, record.version));
  await mkdir(into, { recursive: true });
  const file = path.join(into, "release.zip");
  const got = await downloadObject(store, key, { toFile: file, ...(tally ? { tally } : {}) });
  if (!got) return void problems.push(`${key} is missing`);
  if (got.sha256 !== record.autoupdate?.sha256 || got.sizeBytes !== record.autoupdate?.sizeBytes) return void problems.push(`${key} does not match its record`);
  return extractBundleZip(file, path.join(into, "tree"));
}

/**
 * Every delta a record names, checked like the other objects (present,
 * size, SHA-256, Ed25519 signature, public URL) and then applied with
 * relcast's applier to the zip of the release it comes from: the result must
 * be this release's zip tree, by Sparkle's tree hash.
 */
export async function checkDeltas(
  store: ObjectStore,
  record: ReleaseRecord,
  byVersion: ReadonlyMap<string, ReleaseRecord>,
  pluginId: string,
  publicKey: Buffer | undefined,
  workDir: string,
  tally?: HashTally,
): Promise<string[]> {
  const deltas = record.autoupdate?.deltas ?? [];
  if (deltas.length === 0) return [];
  const problems: string[] = [];
  const work = path.join(workDir, `deltas-${record.version}`);
  try {
    const newTree = await trustedTree(store, record, pluginId, path.join(work, "new"), problems, tally);
    const hashedNew = newTree ? await hashTree(newTree) : undefined;
    const newHash = hashedNew?.hash.toString("hex");
    // A delta may claim no more than this release's own files hold: a hostile one is refused before it inflates.
    const limits = hashedNew ? limitsForNewTree(hashedNew) : undefined;
    for (const delta of deltas) {
      const name = deltaFileName(pluginId, record.version, delta.fromVersion);
      const key = versionedKey(record.version, name);
      const file = path.join(work, name);
      const syntax = signatureProblem(delta.edSignature);
      const signature = Buffer.from(delta.edSignature, "base64");
      // The signature's challenge hash is computed in the same read as the SHA-256.
      const ed25519 = publicKey && !syntax ? { publicKey, signature } : undefined;
      const got = await downloadObject(store, key, { toFile: file, ...(tally ? { tally } : {}), ...(ed25519 ? { ed25519 } : {}) });
      if (!got) {
        problems.push(`delta ${key} is missing`);
        continue;
      }
      const before = problems.length;
      if (got.sizeBytes !== delta.sizeBytes) problems.push(`delta ${key} is ${got.sizeBytes} bytes; the record says ${delta.sizeBytes}`);
      if (got.sha256 !== delta.sha256) problems.push(`delta ${key} has SHA-256 ${got.sha256.slice(0, 12)}…, the record says ${delta.sha256.slice(0, 12)}…`);
      if (!delta.url.endsWith(`/downloads/${name}`)) problems.push(`delta from ${delta.fromVersion}: url ${delta.url} does not name ${name}`);
      if (syntax) problems.push(`delta from ${delta.fromVersion}: ${syntax}`);
      else if (ed25519 && (await signatureHolds(got, ed25519)) !== true) {
        problems.push(`delta ${key}: edSignature does not verify with public key ${ed25519.publicKey.toString("base64")}`);
      }
      // Bytes that are not the ones the record pins and signs are never opened, let alone applied.
      const trusted = problems.length === before;
      const from = byVersion.get(delta.fromVersion);
      if (!from?.autoupdate) {
        problems.push(`delta from ${delta.fromVersion}: that release is not in the catalog`);
        continue;
      }
      if (from.autoupdate.buildNumber !== delta.fromBuild) problems.push(`delta from ${delta.fromVersion}: the record says build ${delta.fromBuild}, that release is build ${from.autoupdate.buildNumber}`);
      if (!newHash || !trusted) continue;
      const oldTree = await trustedTree(store, from, pluginId, path.join(work, `from-${delta.fromVersion}`), problems, tally);
      if (!oldTree) continue;
      try {
        const applied = await applyDelta(oldTree, path.join(work, `applied-${delta.fromVersion}`), file, { oldTree: await hashTree(oldTree), ...(limits ? { limits } : {}) });
        if (applied.header.afterHash !== newHash) problems.push(`delta from ${delta.fromVersion} builds tree ${applied.header.afterHash}, not ${record.version}'s ${newHash}`);
      } catch (err) {
        problems.push(`delta from ${delta.fromVersion} does not apply to ${delta.fromVersion}'s zip: ${(err as Error).message}`);
      }
      await rm(path.join(work, `from-${delta.fromVersion}`), { recursive: true, force: true });
      await rm(path.join(work, `applied-${delta.fromVersion}`), { recursive: true, force: true });
    }
  } finally {
    await rm(work, { recursive: true, force: true });
  }
  return problems;
}
