/**
 * Binds a tree manifest to the zip it claims to describe, so a manifest
 * that agrees with itself but not with the zip (a hash edited and the tree
 * hash recomputed, a zip offset or size changed) is never trusted:
 *
 * - before reading it, its byte size is bounded by the zip's central
 *   directory (a manifest line per entry: its names, fixed fields, link
 *   targets), so an oversized manifest is refused unread;
 * - after parsing, its tree (every path, kind, mode, size) must be the tree
 *   the directory lays out, and each file and link must sit where the
 *   directory says, with the directory's method, CRC-32 and sizes.
 *
 * What the directory cannot prove is a content SHA-1; old-tree.ts binds
 * those against the new zip (unchanged files) or by reading the entry
 * (changed and removed files).
 */
import { crc32 } from "node:zlib";
import { RelcastError } from "../../core/errors.js";
import type { ManifestTable } from "./manifest-table.js";
import { MANIFEST_HARD_CAP, type ManifestTree } from "./tree-manifest-schema.js";
import type { ZipDirectory } from "./zip-directory.js";
import { layOutZip } from "./zip-layout.js";

const PER_ENTRY = 1024;
const SLACK = 64 << 10;
/** JSON escapes a byte in at most 6 characters; a name appears twice (path and zip name). */
const ESCAPE = 6;

/** The most bytes a manifest of this zip can take. */
export function manifestByteCap(dir: ZipDirectory): number {
  return Math.min(MANIFEST_HARD_CAP, SLACK + PER_ENTRY * dir.length + 2 * ESCAPE * dir.nameBytes + ESCAPE * dir.linkBytes);
}

/** Undefined when the manifest describes the directory's zip; otherwise why not. */
export function manifestDisagreement(table: ManifestTable, tree: ManifestTree, dir: ZipDirectory, zipName: string): string | undefined {
  let layout;
  try {
    layout = layOutZip(zipName, dir);
  } catch (err) {
    return (err as Error).message;
  }
  if (layout.entries.length !== tree.entries.length) return `it lists ${tree.entries.length} entries; the zip's central directory lays out ${layout.entries.length}`;
  for (let i = 0; i < tree.entries.length; i++) {
    const m = tree.entries[i]!;
    const z = layout.entries[i]!;
    if (m.rel !== z.rel || m.kind !== z.kind || m.perms !== z.perms || m.size !== z.size) return `${JSON.stringify(m.rel)} differs from the zip's central directory (path, kind, mode or size)`;
  }
  for (let i = 0; i < tree.entries.length; i++) {
    const e = tree.entries[i]!;
    const place = table.place(i);
    if (!place) continue;
    // The layout has the manifest's paths in its order (checked above): entry i's zip entry is the layout's.
    const z = layout.zipIndex[i]!;
    const r = z >= 0 ? dir.raw(z) : undefined;
    if (!r || r.name !== place.name || r.localHeaderOffset !== place.offset || r.method !== place.method || r.crc32 !== place.crc32 || r.compressedSize !== place.compressedSize) {
      return `the zip entry of ${JSON.stringify(e.rel)} differs from the zip's central directory (name, offset, method, CRC-32 or size)`;
    }
    // A link's target is used as stated (never read from the zip): its CRC-32 must be the directory's.
    if (e.kind === "symlink" && crc32(Buffer.from(table.target(i)!, "utf8")) >>> 0 !== r.crc32) return `the target of symlink ${JSON.stringify(e.rel)} does not have the zip's CRC-32`;
  }
  return undefined;
}

export function notBound(manifestName: string, why: string): RelcastError {
  return new RelcastError("E_VERIFY", `${manifestName} does not describe its release's zip: ${why}`, "run `relcast verify`; remove that tree manifest (publish then reads the zip)");
}
