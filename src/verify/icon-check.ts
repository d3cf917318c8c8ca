import { readPng } from "../core/png-image.js";
import type { ReleaseRecord } from "../domain/record-schema.js";
import { iconKey, versionedKey } from "../domain/release-layout.js";
import type { ObjectStore } from "../store/object-store.js";
import { downloadObject, IN_MEMORY_BYTES, type HashTally } from "./download-object.js";
import { runPool } from "./run-pool.js";

/** The fix each finding names: the icon is missing, or its bytes are not the record's. */
export interface IconFixes {
  missing: string;
  bytes: string;
}

/** What is wrong with one stored copy of a release's icon, against what its record pins. */
async function iconCopyProblems(store: ObjectStore, key: string, r: ReleaseRecord, tally: HashTally, fix: IconFixes): Promise<string[]> {
  const icon = r.icon!;
  const got = await downloadObject(store, key, { tally, keepUpTo: IN_MEMORY_BYTES });
  if (!got) return [`${key} is missing, but the record of ${r.version} names its icon; ${fix.missing}`];
  if (got.sizeBytes !== icon.sizeBytes) return [`${key} is ${got.sizeBytes} bytes; the record of ${r.version} says ${icon.sizeBytes}; ${fix.bytes}`];
  if (got.sha256 !== icon.sha256) return [`${key} has SHA-256 ${got.sha256.slice(0, 12)}…; the record of ${r.version} says ${icon.sha256.slice(0, 12)}…; ${fix.bytes}`];
  if (!got.body) return [`${key} could not be read whole`];
  const png = await readPng(got.body);
  if ("problem" in png) return [`${key} is not a valid PNG: ${png.problem}`];
  if (png.width !== icon.width || png.height !== icon.height) return [`${key} is ${png.width}×${png.height} pixels; the record of ${r.version} says ${icon.width}×${icon.height}`];
  return [];
}

/**
 * The icon of every listed release that has one: the stored PNG beside the
 * release and its public copy under `icons/` (the one the pages show and
 * link previews fetch) are the bytes the record pins, and a PNG of the
 * recorded size (checked chunk by chunk, CRCs included).
 */
export async function iconProblems(store: ObjectStore, records: readonly ReleaseRecord[], tally: HashTally, repair: IconFixes): Promise<string[]> {
  const own = (r: ReleaseRecord) => `re-run the publish of ${r.version} with the same bundle`;
  const checks = records.filter((r) => r.icon).flatMap((r) => [
    { r, key: versionedKey(r.version, r.icon!.fileName), fix: { missing: own(r), bytes: own(r) } },
    { r, key: iconKey(r.icon!.fileName), fix: repair },
  ]);
  const found = await runPool(checks, 4, ({ r, key, fix }) => iconCopyProblems(store, key, r, tally, fix));
  return found.flat();
}
