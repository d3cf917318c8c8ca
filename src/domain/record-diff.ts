import { isDeepStrictEqual } from "node:util";
import type { ReleaseRecord } from "./record-schema.js";

/** Set once at the first publish (times, yank state) or by where the store lives: never a difference of the release. */
const NOT_COMPARED = new Set([
  "publishedAt", "publishedAtIso", "publishedAtLocal", "publishedAtTimezone", "updatedAt", "yanked", "yankedReason", "yankedAt", "rollout",
  "downloadUrl", "appcastUrl", "objectStore.bucket",
]);
const NESTED = new Set(["objectStore", "autoupdate"]);
/** Written only when given: a re-run that adds one to a record without it is a change, not a migrated record. */
const ONLY_WHEN_GIVEN = new Set(["localizedReleaseNotes"]);

function compare(stored: Record<string, unknown>, fresh: Record<string, unknown>, prefix: string, out: string[]): void {
  for (const key of new Set([...Object.keys(stored), ...Object.keys(fresh)])) {
    const name = `${prefix}${key}`;
    if (NOT_COMPARED.has(name)) continue;
    // A field the stored record lacks was added by a later relcast (migrated records): not the user's change.
    if (!(key in stored) && !ONLY_WHEN_GIVEN.has(name)) continue;
    const a = stored[key];
    const b = fresh[key];
    if (NESTED.has(name) && a && b && typeof a === "object" && typeof b === "object") compare(a as Record<string, unknown>, b as Record<string, unknown>, `${name}.`, out);
    else if (!isDeepStrictEqual(a, b)) out.push(name);
  }
}

/**
 * The record fields in which a re-run's record differs from the stored one
 * (notes, summary, channel, display name, build, signature, …), as dotted
 * names. Empty when the re-run would write the same release.
 */
export function recordDifferences(stored: ReleaseRecord, fresh: ReleaseRecord): string[] {
  const out: string[] = [];
  compare(stored as Record<string, unknown>, fresh as Record<string, unknown>, "", out);
  return out;
}
