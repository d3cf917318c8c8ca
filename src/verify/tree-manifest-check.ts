import type { FeedRecord } from "../domain/appcast-selection.js";
import { treeManifestKey, versionedKey, zipFileName } from "../domain/release-layout.js";
import { readStoredZipTree } from "../sparkle/delta/stored-zip-tree.js";
import { manifestByteCap } from "../sparkle/delta/manifest-binding.js";
import { MANIFEST_HARD_CAP, parseTreeManifest } from "../sparkle/delta/tree-manifest.js";
import { readZipDirectory } from "../sparkle/delta/zip-directory.js";
import { readRange as readStoreRange } from "../store/read-range.js";
import type { ObjectStore } from "../store/object-store.js";

const MAX_LISTED = 5;

async function readRange(store: ObjectStore, key: string, start: number, end: number): Promise<Buffer> {
  const bytes = await readStoreRange(store, key, start, end);
  if (!bytes) throw new Error(`${key} is missing`);
  return bytes;
}

/**
 * A release's tree manifest (when it has one: releases published before
 * them have none) against its zip, trusting neither: the manifest must parse
 * and agree with itself, pin the zip the record pins, and describe exactly
 * the tree the zip unpacks to (every path, kind, mode, size, content hash
 * and zip entry, and the tree hash), read from the zip itself in one pass
 * that also checks the zip's SHA-256 against the record. Later publishes
 * make their deltas from this manifest, so a wrong one would give deltas
 * installed copies refuse.
 */
export async function treeManifestProblems(store: ObjectStore, pluginId: string, record: FeedRecord): Promise<string[]> {
  const key = treeManifestKey(record.version);
  const head = await store.head(key);
  if (!head) return [];
  // Bounded by the zip's central directory before it is read: an oversized manifest is a problem, not a memory spike.
  let cap = MANIFEST_HARD_CAP;
  const dirZipKey = versionedKey(record.version, zipFileName(pluginId, record.version));
  const zipHead = await store.head(dirZipKey);
  if (zipHead) {
    try {
      cap = manifestByteCap(await readZipDirectory((start, end) => readRange(store, dirZipKey, start, end), zipHead.size, dirZipKey));
    } catch {
      // An unreadable zip is reported by the zip's own checks; the hard cap still holds.
    }
  }
  if (head.size > cap) return [`tree manifest ${key} is ${head.size} bytes, more than a manifest of its zip can be (${cap}); it was not read. Remove ${key} (publish then reads the zip)`];
  const got = await store.get(key);
  if (!got) return [];
  let parsed;
  try {
    parsed = parseTreeManifest(got.body, key, cap);
  } catch (err) {
    return [(err as Error).message];
  }
  const { manifest, tree } = parsed;
  const au = record.autoupdate;
  const found: string[] = [];
  if (manifest.version !== record.version) found.push(`tree manifest ${key} is for version ${manifest.version}`);
  if (manifest.zip.sha256 !== au.sha256 || manifest.zip.sizeBytes !== au.sizeBytes) found.push(`tree manifest ${key} pins another zip (sha256 ${manifest.zip.sha256.slice(0, 12)}…, ${manifest.zip.sizeBytes} bytes) than the record`);
  if (found.length > 0 || au.sha256 === undefined) return found;

  const zipKey = versionedKey(record.version, zipFileName(pluginId, record.version));
  const stream = await store.getStream(zipKey);
  if (!stream) return [`tree manifest ${key} cannot be checked: ${zipKey} is missing`];
  let zip;
  try {
    zip = await readStoredZipTree(stream.stream, { name: zipKey, keepLimit: 0, expected: { sha256: au.sha256, sizeBytes: au.sizeBytes } });
  } catch (err) {
    return [`tree manifest ${key} cannot be checked against ${zipKey}: ${(err as Error).message}`];
  } finally {
    stream.stream.destroy();
  }
  await zip.close();
  if (!zip.hash.equals(tree.hash)) found.push(`tree manifest ${key} states tree hash ${tree.hash.toString("hex")}; the zip unpacks to ${zip.hash.toString("hex")}`);
  const inZip = new Map(zip.entries.map((e) => [e.rel, e]));
  const differing: string[] = [];
  for (const m of manifest.entries) {
    const z = inZip.get(m.path);
    inZip.delete(m.path);
    const place = z ? zip.raw.get(m.path) : undefined;
    const hashes = m.kind === "file" ? zip.fileHashes : zip.linkHashes;
    const same =
      z !== undefined &&
      z.kind === m.kind &&
      z.perms === m.mode &&
      (m.kind === "dir" ||
        ((m.kind !== "file" || z.size === m.size) &&
          hashes.get(m.path)?.toString("hex") === m.sha1 &&
          place !== undefined &&
          place.name === m.zip.name &&
          place.localHeaderOffset === m.zip.offset &&
          place.method === m.zip.method &&
          place.crc32 === m.zip.crc32 &&
          place.compressedSize === m.zip.compressedSize));
    if (!same) differing.push(m.path);
  }
  differing.push(...[...inZip.keys()].map((rel) => `${rel} (not in the manifest)`));
  if (differing.length > 0) {
    found.push(`tree manifest ${key} does not describe the zip's tree: ${differing.slice(0, MAX_LISTED).map((p) => JSON.stringify(p)).join(", ")}${differing.length > MAX_LISTED ? ` and ${differing.length - MAX_LISTED} more` : ""} differ; later deltas from ${record.version} would be refused by installed copies. Remove ${key} (publish then reads the zip)`);
  }
  return found;
}
