import type { RelcastConfig } from "../config/schema.js";
import { RelcastError } from "../core/errors.js";
import type { ObjectStore } from "../store/object-store.js";
import { CATALOG_KEY } from "../domain/release-layout.js";
import { compareNewestFirst, parseCatalog } from "../domain/catalog.js";
import type { ReleaseRecord } from "../domain/record-schema.js";
import { isYanked } from "../domain/yank-state.js";
import { applyChange, releasesOf } from "./apply-change.js";
import { readAllRecords, type StoredRecords } from "../catalog/stored-records.js";
import { recordEntryDifferences } from "../domain/record-vs-entry.js";
import { refuseStoredBuildOrder } from "../domain/build-order.js";
import type { FeedSigning } from "../catalog/feed-signing.js";
import { checkAppKey } from "../steps/preflight/release-key.js";

export type RebuildResult = Omit<StoredRecords, "objectKeys">;


export interface RebuildChange {
  version: string;
  channel: string;
  change: "adds" | "drops" | "yanks" | "unyanks" | "changes";
  /** `changes`: the fields in which the record differs from the current catalog entry (dotted names). */
  fields?: string[];
}

export interface RebuildOutcome extends RebuildResult {
  /** Every release the new catalog adds, drops or changes (its yank state, or any field of its record) compared with the current one. */
  changes: RebuildChange[];
  /** Why the current catalog could not be compared (unreadable); then every release counts as added. */
  currentProblem?: string;
  written: boolean;
}

/** What the new catalog changes compared with the current one, newest first as the catalog lists them. */
async function changesAgainstCurrent(store: ObjectStore, records: readonly ReleaseRecord[]): Promise<{ changes: RebuildChange[]; currentProblem?: string }> {
  const got = await store.get(CATALOG_KEY);
  let current: ReleaseRecord[] = [];
  let currentProblem: string | undefined;
  if (got) {
    try {
      current = parseCatalog(got.body.toString("utf8"), store.uriFor(CATALOG_KEY)).versions;
    } catch (err) {
      currentProblem = (err as Error).message;
    }
  }
  const before = new Map(current.map((r) => [r.version, r]));
  const after = new Map(records.map((r) => [r.version, r]));
  const changes: RebuildChange[] = [];
  for (const r of [...records].sort(compareNewestFirst)) {
    const was = before.get(r.version);
    if (!was) changes.push({ version: r.version, channel: r.channel, change: "adds" });
    else {
      if (isYanked(was) !== isYanked(r)) changes.push({ version: r.version, channel: r.channel, change: isYanked(r) ? "yanks" : "unyanks" });
      // A record edited after its publish: the rebuild spreads the edit to catalog, appcast and pages, so it is named.
      const fields = recordEntryDifferences(r, was);
      if (fields.length > 0) changes.push({ version: r.version, channel: r.channel, change: "changes", fields });
    }
  }
  for (const r of current) if (!after.has(r.version)) changes.push({ version: r.version, channel: r.channel, change: "drops" });
  return { changes, ...(currentProblem !== undefined ? { currentProblem } : {}) };
}

/**
 * Regenerates catalog and appcast from the immutable records and the yank
 * markers, and the public site from them (as a publish does: `verify` holds
 * the public files to the canonical ones): repairs a hand-edited or lost
 * catalog, lists a release whose publish was interrupted after its record,
 * and migrates stores written by older tools. `dryRun`: works out and
 * returns the changes, writes nothing.
 */
export async function rebuildFeeds(store: ObjectStore, config: RelcastConfig, options: { allowSkipped: boolean; dryRun?: boolean; signing?: FeedSigning }): Promise<RebuildOutcome> {
  const { objectKeys: _listed, ...result } = await readAllRecords(store, config.pluginId);
  const misplaced = result.skipped.filter((s) => s.misplaced);
  if (misplaced.length > 0 && !options.allowSkipped) {
    throw new RelcastError(
      "E_CATALOG",
      `${misplaced.length} stored record(s) lie in another version's folder: ${misplaced.map((s) => `${s.key} (${s.reason.split(":")[0]})`).join(", ")}; a rebuild would list a release from the wrong folder or twice`,
      "move each to releases/<its version>/release.json if that has no record, otherwise remove it; relcast verify names them all (or pass --skip-invalid to rebuild without them)",
    );
  }
  if (result.skipped.length > 0 && !options.allowSkipped) {
    throw new RelcastError(
      "E_CATALOG",
      `${result.skipped.length} stored record(s) are invalid: ${result.skipped.map((s) => `${s.key} (${s.reason})`).join(", ")}`,
      "fix or remove those records, or pass --skip-invalid to rebuild without them",
    );
  }
  // A catalog lost and republished into can hold records whose builds rank against their versions.
  refuseStoredBuildOrder(result.records, `${store.uriFor(CATALOG_KEY)} cannot be rebuilt`);
  const compared = await changesAgainstCurrent(store, result.records);
  // A dry run says what the real one would refuse.
  if (options.dryRun && options.signing?.key) await checkAppKey(store, config.pluginId, options.signing.key, await releasesOf(store, config, { kind: "replace", records: result.records }));
  if (options.dryRun) return { ...result, ...compared, written: false };
  await applyChange(store, config, "rebuild", { kind: "replace", records: result.records }, [], { site: true, signing: options.signing });
  return { ...result, ...compared, written: true };
}
