import { rm } from "node:fs/promises";
import path from "node:path";
import { RelcastError } from "../../core/errors.js";
import type { ReleaseRecord } from "../../domain/record-schema.js";
import { treeManifestKey, versionedKey, zipFileName } from "../../domain/release-layout.js";
import { manifestByteCap, manifestDisagreement, notBound } from "../../sparkle/delta/manifest-binding.js";
import { type ManifestBackedTree, treeFromManifest } from "../../sparkle/delta/manifest-tree.js";
import { readZipDirectory } from "../../sparkle/delta/zip-directory.js";
import { readStoredZipTree } from "../../sparkle/delta/stored-zip-tree.js";
import { type ManifestTable, type ReadManifest, readManifestTable, readManifestTableStream } from "../../sparkle/delta/manifest-table.js";
import type { ManifestTree } from "../../sparkle/delta/tree-manifest.js";
import type { ZipBundleTree } from "../../sparkle/delta/zip-bundle-tree.js";
import type { HashedTree } from "../../sparkle/delta/tree-hash.js";
import { readRange as readStoreRange } from "../../store/read-range.js";
import type { ObjectStore } from "../../store/object-store.js";

/** An old release's tree, however it was read, and how (for the log). */
export type OldTree = HashedTree & { close(): Promise<void>; describe(): string };

async function readRange(store: ObjectStore, key: string, start: number, end: number): Promise<Buffer> {
  const bytes = await readStoreRange(store, key, start, end);
  if (!bytes) throw new RelcastError("E_VERIFY", `${store.uriFor(key)} is missing`, "run `relcast verify`; publish with --no-deltas to skip deltas meanwhile");
  return bytes;
}

/**
 * The SHA-1s a manifest states, bound to real bytes (its places, CRC-32s and
 * sizes are already bound to the zip's central directory): a file the new
 * zip holds with the same SHA-1 must have the new entry's CRC-32 and size
 * (the delta keeps it unread, so a wrong hash there would give a delta whose
 * "before" tree is not the release's); every other file (changed or
 * removed) is read from the zip now and its SHA-1 checked.
 */
async function bindContentHashes(table: ManifestTable, newTree: ZipBundleTree, old: ManifestBackedTree, manifestName: string): Promise<void> {
  for (let i = 0; i < old.entries.length; i++) {
    const e = old.entries[i]!;
    if (e.kind !== "file") continue;
    const same = newTree.fileHashes.get(e.rel)?.equals(table.sha1Of(i)) ?? false;
    const now = newTree.raw.get(e.rel);
    if (same) {
      if (!now || now.crc32 !== table.place(i)!.crc32 || now.size !== e.size) throw notBound(manifestName, `${JSON.stringify(e.rel)} has the new release's SHA-1 but another CRC-32 or size`);
    } else {
      await old.source.readFile(e);
    }
  }
}

/**
 * The manifest streamed line by line into its table (never its whole bytes in memory); one that is not in
 * relcast's own layout is read again whole and parsed as JSON, with the same checks.
 */
async function readManifest(store: ObjectStore, key: string, name: string, cap: number): Promise<ReadManifest> {
  const streamed = await store.getStream(key);
  if (!streamed) throw notBound(name, "it disappeared while read");
  try {
    const read = await readManifestTableStream(streamed.stream, name, cap);
    if (read) return read;
  } finally {
    streamed.stream.destroy();
  }
  const got = await store.get(key);
  if (!got) throw notBound(name, "it disappeared while read");
  return readManifestTable(got.body, name, cap);
}

/**
 * The release's manifest, parsed and bound to its zip's central directory. A
 * function of its own so that the directory and the manifest's bytes (tens of
 * megabytes for 70,000 entries) are garbage once it returns, before the delta
 * is made.
 */
async function readBoundManifest(store: ObjectStore, record: ReleaseRecord, storedSize: number, readZip: (start: number, end: number) => Promise<Buffer>): Promise<{ table: ManifestTable; tree: ManifestTree }> {
  const key = versionedKey(record.version, zipFileName(record.pluginId, record.version));
  const expected = record.autoupdate!;
  const manifestKey = treeManifestKey(record.version);
  const manifestName = store.uriFor(manifestKey);
  const dir = await readZipDirectory(readZip, expected.sizeBytes, store.uriFor(key));
  const cap = manifestByteCap(dir);
  if (storedSize > cap) throw notBound(manifestName, `it is ${storedSize} bytes, more than a manifest of a zip of ${dir.length} entries can be (${cap}); it was not read`);
  const { head, table, tree } = await readManifest(store, manifestKey, manifestName, cap);
  if (head.version !== record.version || head.zip.sha256 !== expected.sha256 || head.zip.sizeBytes !== expected.sizeBytes) {
    throw new RelcastError("E_VERIFY", `${manifestName} describes another zip than the record of ${record.version} pins`, "run `relcast verify`");
  }
  const why = manifestDisagreement(table, tree, dir, store.uriFor(key));
  if (why) throw notBound(manifestName, why);
  return { table, tree };
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
  const manifestName = store.uriFor(manifestKey);
  const stored = await store.head(manifestKey);
  let fallback = `${record.version} has no tree manifest (published before relcast stored them, or without a delta of its own): its zip was read whole`;
  if (stored) {
    let opened: ManifestBackedTree | undefined;
    try {
      const readZip = (start: number, end: number) => readRange(store, key, start, end);
      const { table, tree } = await readBoundManifest(store, record, stored.size, readZip);
      opened = await treeFromManifest(table, tree, { name: store.uriFor(key), readRange: readZip, scratchFile: path.join(work, "manifest-changed-files") });
      await bindContentHashes(table, newTree, opened, manifestName);
      const tree2 = opened;
      return { ...tree2, source: tree2.source, close: tree2.close, describe: () => `old tree from its manifest (${tree2.fetched} changed file(s) read from its zip by range)` };
    } catch (err) {
      await opened?.close();
      await rm(path.join(work, "manifest-changed-files"), { force: true });
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
