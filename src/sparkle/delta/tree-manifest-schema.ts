/**
 * The stored form of a tree manifest: its schema (zod), its types, and the
 * text layout relcast writes (one entry a line). Apart from tree-manifest.ts
 * so that the table reader (manifest-table.ts) and the writer share it
 * without importing each other.
 */
import { z } from "zod";
import { linkTargetBytesProblem } from "../../core/utf8-bytes.js";
import { type HashedTree, PERMISSION_FLAGS } from "./tree-hash.js";

export const TREE_MANIFEST_FORMAT = "relcast-tree-manifest/1";
/** No manifest is read past this, whatever its zip (manifest-binding.ts bounds it by the zip's directory too). */
export const MANIFEST_HARD_CAP = 256 << 20;

const hex = (length: number) => z.string().regex(new RegExp(`^[0-9a-f]{${length}}$`));
const u32 = z.number().int().min(0).max(0xffffffff);
const byteCount = z.number().int().min(0).max(Number.MAX_SAFE_INTEGER);
const mode = z.number().int().min(0).max(PERMISSION_FLAGS);
const path = z.string().min(2).max(4096).startsWith("/");
/** Where an entry's bytes sit in the zip: its local header, method, CRC-32 and sizes. */
const zipPlace = z.strictObject({ name: z.string().min(1).max(4096), offset: byteCount, method: z.union([z.literal(0), z.literal(8)]), crc32: u32, compressedSize: byteCount });

const MAX_ENTRIES = 10_000_000;
/** A link's target as the zip rules take it (zip-layout.ts): UTF-8 text (no lone surrogate), no NUL, not empty. */
const linkTarget = z
  .string()
  .min(1)
  .max(4096)
  .refine((t) => !/\p{Cs}/u.test(t) && linkTargetBytesProblem(Buffer.from(t, "utf8")) === undefined, "a link target must be UTF-8 text without NUL");

export const entrySchema = z.discriminatedUnion("kind", [
  z.strictObject({ path, kind: z.literal("dir"), mode }),
  z.strictObject({ path, kind: z.literal("file"), mode, size: byteCount, sha1: hex(40), zip: zipPlace }),
  z.strictObject({ path, kind: z.literal("symlink"), mode, target: linkTarget, sha1: hex(40), zip: zipPlace }),
]);

export const treeManifestSchema = z.strictObject({
  format: z.literal(TREE_MANIFEST_FORMAT),
  version: z.string().min(1).max(256),
  /** The zip this manifest describes, as its record pins it. */
  zip: z.strictObject({ sha256: hex(64), sizeBytes: byteCount }),
  /** Sparkle's tree hash of the bundle the zip unpacks to. */
  treeHash: hex(40),
  entries: z.array(entrySchema).max(MAX_ENTRIES),
});

export type TreeManifest = z.infer<typeof treeManifestSchema>;
export type ManifestEntry = TreeManifest["entries"][number];
export type ManifestFile = Extract<ManifestEntry, { kind: "file" }>;
export type ManifestLink = Extract<ManifestEntry, { kind: "symlink" }>;

export type ManifestHead = Omit<TreeManifest, "entries">;

/**
 * The stored form, in pieces: the head, then one entry a line (so a diff of
 * two manifests reads as a diff of two trees), then the end. A writer can
 * send the pieces out as they come (tree-manifest-writer.ts).
 */
export const manifestText = {
  head: (head: ManifestHead): string => `${JSON.stringify(head, null, 2).slice(0, -2)},\n  "entries": [\n`,
  entry: (e: ManifestEntry, first: boolean): string => `${first ? "" : ",\n"}    ${JSON.stringify(e)}`,
  end: "\n  ]\n}\n",
};

/** A manifest's tree without its bytes: entries, content hashes and tree hash, as `HashedTree` has them. */
export type ManifestTree = Omit<HashedTree, "source">;

