import path from "node:path";
import { RelcastError } from "../../core/errors.js";
import type { ReleaseRecord } from "../../domain/record-schema.js";
import { treeManifestKey, versionedKey, zipFileName } from "../../domain/release-layout.js";
import { treeFromManifest } from "../../sparkle/delta/manifest-tree.js";
import { readStoredZipTree } from "../../sparkle/delta/stored-zip-tree.js";
import { parseTreeManifest } from "../../sparkle/delta/tree-manifest.js";
import type { ZipBundleTree } from "../../sparkle/delta/zip-bundle-tree.js";
import type { HashedTree } from "../../sparkle/delta/tree-hash.js";
import type { ObjectStore } from "../../store/object-store.js";

/** An old release's tree, however it was read, and how (for the log). */
export type OldTree = HashedTree & { close(): Promise<void>; describe(): string };

async function readRange(store: ObjectStore, key: string, start: number, end: number): Promise<Buffer> {
  const got = await store.getStream(key, { start, end });
  if (!got) throw new RelcastError("E_VERIFY", `${store.uriFor(key)} is missing`, "run `relcast verify`; publish with --no-deltas to skip deltas meanwhile");
  const parts: Buffer[] = [];
  try {
    for await (const chunk of got.stream) parts.push(chunk as Buffer);
  } finally {
    got.stream.destroy();
  }
  return Buffer.concat(parts);
}

/**
 * From the release's tree manifest when it has a valid one that pins the
 * record's zip: nothing of the zip is read but the entries a delta diffs.
 * Otherwise (a release published before manifests, or one whose manifest
 * does not hold up) the old zip is streamed once, checked against the
 * record's SHA-256, and compared entry by entry with the new zip.
 */
export async function openOldTree(store: ObjectStore, record: ReleaseRecord, newTree: ZipBundleTree, work: string, keepLimit: number, warn: (line: string) => void): Promise<OldTree> {
  const key = versionedKey(record.version, zipFileName(record.pluginId, record.version));
  const expected = record.autoupdate;
  if (!expected?.sha256) throw new RelcastError("E_VERIFY", `cannot make a delta from ${record.version}: its record has no zip SHA-256`, "run `relcast verify`; publish with --no-deltas to skip deltas meanwhile");
  const manifestKey = treeManifestKey(record.version);
  const stored = await store.get(manifestKey);
  let fallback = `${record.version} has no tree manifest (published before relcast stored them, or without a delta of its own): its zip was read whole`;
  if (stored) {
    try {
      const { manifest, tree } = parseTreeManifest(stored.body, store.uriFor(manifestKey));
      if (manifest.version !== record.version || manifest.zip.sha256 !== expected.sha256 || manifest.zip.sizeBytes !== expected.sizeBytes) {
        throw new RelcastError("E_VERIFY", `${store.uriFor(manifestKey)} describes another zip than the record of ${record.version} pins`, "run `relcast verify`");
      }
      const opened = await treeFromManifest(manifest, tree, { name: store.uriFor(key), readRange: (start, end) => readRange(store, key, start, end), scratchFile: path.join(work, "changed-files") });
      return { ...opened, source: opened.source, close: opened.close, describe: () => `old tree from its manifest (${opened.fetched} changed file(s) read from its zip by range)` };
    } catch (err) {
      if (!(err instanceof RelcastError) || err.code !== "E_VERIFY") throw err;
      fallback = `${err.message}: its zip was read whole instead`;
      warn(fallback);
    }
  }
  const got = await store.getStream(key);
  if (!got) throw new RelcastError("E_VERIFY", `cannot make a delta from ${record.version}: ${store.uriFor(key)} is missing`, "run `relcast verify`; publish with --no-deltas to skip deltas meanwhile");
  try {
    const tree = await readStoredZipTree(got.stream, { name: store.uriFor(key), newZip: newTree, spillFile: path.join(work, "changed-files"), keepLimit, expected: { sha256: expected.sha256, sizeBytes: expected.sizeBytes } });
    return { ...tree, describe: () => `${fallback} (${tree.reused} entries unchanged, ${tree.inflated} inflated)` };
  } finally {
    got.stream.destroy();
  }
}
