/**
 * Writes a release's tree manifest straight to a file as its entries are
 * made: no array of entry objects and no string of the whole manifest (for a
 * bundle of 70,000 files those were about 80 MB at once), with the same bytes
 * as `serializeTreeManifest(treeManifestOf(...))`.
 */
import { createHash } from "node:crypto";
import { open, rm } from "node:fs/promises";
import { manifestEntriesOf, manifestHeadOf, manifestText } from "./tree-manifest.js";
import type { ZipBundleTree } from "./zip-layout.js";

/** Text gathered before one write. */
const WRITE_CHARS = 1 << 20;

/** The written file's size and SHA-256 (hex); undefined, and no file, when the zip can have no manifest. */
export async function writeTreeManifest(tree: ZipBundleTree, version: string, zip: { sha256: string; sizeBytes: number }, file: string): Promise<{ sizeBytes: number; sha256: string } | undefined> {
  const fh = await open(file, "wx");
  const sha256 = createHash("sha256");
  let sizeBytes = 0;
  let pending = "";
  const flush = async (): Promise<void> => {
    const bytes = Buffer.from(pending, "utf8");
    pending = "";
    sha256.update(bytes);
    sizeBytes += bytes.length;
    await fh.write(bytes, 0, bytes.length, null);
  };
  let kept = false;
  try {
    pending = manifestText.head(manifestHeadOf(tree, version, zip));
    let first = true;
    for await (const entry of manifestEntriesOf(tree)) {
      if (!entry) return undefined;
      pending += manifestText.entry(entry, first);
      first = false;
      if (pending.length >= WRITE_CHARS) await flush();
    }
    pending += manifestText.end;
    await flush();
    kept = true;
    return { sizeBytes, sha256: sha256.digest("hex") };
  } finally {
    await fh.close();
    if (!kept) await rm(file, { force: true });
  }
}
