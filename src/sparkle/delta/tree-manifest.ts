/**
 * A release's tree manifest: what a later publish needs to make a delta from
 * this release without reading its zip (each entry's path, kind, mode, size,
 * content hash, link target, where its bytes sit in the zip, and Sparkle's
 * tree hash). Stored beside the record; made from the zip relcast just wrote
 * and checked against it, so it is deterministic for a given zip.
 *
 * Nothing read back is trusted: `parseTreeManifest` checks the shape (zod),
 * the paths (safe, in fts order, each below a folder), every link's hash
 * against its target, and recomputes the tree hash. Bytes read later through
 * a manifest are checked against its CRC-32 and SHA-1 (manifest-tree.ts).
 */
import { RelcastError } from "../../core/errors.js";
import { CUSTOM_ICON_PATH } from "./tree-hash.js";
import { readManifestTable } from "./manifest-table.js";
import { MANIFEST_HARD_CAP, type ManifestEntry, type ManifestHead, manifestText, type ManifestTree, TREE_MANIFEST_FORMAT, type TreeManifest } from "./tree-manifest-schema.js";

export * from "./tree-manifest-schema.js";
import type { ZipBundleTree } from "./zip-layout.js";

/**
 * The manifest's entries in order, as read from a zip relcast wrote; an
 * `undefined` (and nothing after it) when the zip can have no manifest: a
 * link target is not UTF-8, or the bundle has a resource-fork icon (such a
 * release keeps today's path).
 */
export async function* manifestEntriesOf(tree: ZipBundleTree): AsyncGenerator<ManifestEntry | undefined> {
  for (let i = 0; i < tree.entries.length; i++) {
    const e = tree.entries[i]!;
    // A resource-fork icon has no content hash (Sparkle skips it, and no delta is made from such a bundle).
    if (e.rel === CUSTOM_ICON_PATH) return yield undefined;
    if (e.kind === "dir") {
      yield { path: e.rel, kind: "dir", mode: e.perms };
      continue;
    }
    const raw = tree.raw.at(i);
    if (!raw) throw new RelcastError("E_INTERNAL", `${e.rel} has no zip entry in ${tree.file}`);
    const place = { name: raw.name, offset: raw.localHeaderOffset, method: raw.method as 0 | 8, crc32: raw.crc32, compressedSize: raw.compressedSize };
    if (e.kind === "file") {
      yield { path: e.rel, kind: "file", mode: e.perms, size: e.size, sha1: tree.fileHashes.get(e.rel)!.toString("hex"), zip: place };
    } else {
      const bytes = await tree.source.readLink(e);
      const target = bytes.toString("utf8");
      if (!Buffer.from(target, "utf8").equals(bytes)) return yield undefined;
      yield { path: e.rel, kind: "symlink", mode: e.perms, target, sha1: tree.linkHashes.get(e.rel)!.toString("hex"), zip: place };
    }
  }
}


export function manifestHeadOf(tree: ZipBundleTree, version: string, zip: { sha256: string; sizeBytes: number }): ManifestHead {
  return { format: TREE_MANIFEST_FORMAT, version, zip: { sha256: zip.sha256, sizeBytes: zip.sizeBytes }, treeHash: tree.hash.toString("hex") };
}

/** The manifest of a zip relcast wrote (its tree read in place), whole in memory; undefined when it can have none (see manifestEntriesOf). */
export async function treeManifestOf(tree: ZipBundleTree, version: string, zip: { sha256: string; sizeBytes: number }): Promise<TreeManifest | undefined> {
  const entries: ManifestEntry[] = [];
  for await (const e of manifestEntriesOf(tree)) {
    if (!e) return undefined;
    entries.push(e);
  }
  return { ...manifestHeadOf(tree, version, zip), entries };
}

/** The stored bytes of a manifest held whole in memory. */
export function serializeTreeManifest(manifest: TreeManifest): Buffer {
  const { entries, ...head } = manifest;
  return Buffer.from(manifestText.head(head) + entries.map((e, i) => manifestText.entry(e, i === 0)).join("") + manifestText.end);
}

/**
 * Parses stored bytes and checks them against themselves: safe paths in fts
 * order, each below a folder of the manifest, link hashes that are the hash
 * of their targets, and a tree hash that the entries give. Throws a
 * RelcastError naming what is wrong.
 */
export function parseTreeManifest(bytes: Buffer, name: string, maxBytes = MANIFEST_HARD_CAP): { manifest: TreeManifest; tree: ManifestTree } {
  const entries: ManifestEntry[] = [];
  const { head, tree } = readManifestTable(bytes, name, maxBytes, entries);
  return { manifest: { ...head, entries }, tree };
}
