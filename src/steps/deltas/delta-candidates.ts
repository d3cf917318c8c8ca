import type { CatalogEntry } from "../../catalog/catalog-entry.js";
import { DEFAULT_CHANNEL } from "../../domain/build-order.js";
import { compareSparkleVersions } from "../../sparkle/version-comparator.js";

/**
 * The releases a new build gets deltas from, as generate_appcast picks them:
 * older builds only (never a newer or equal one), highest first, at most
 * `maximum`; from the release's own channel and from stable (an install on a
 * beta channel may sit on either); never a yanked release.
 */
export function deltaCandidates(entries: readonly CatalogEntry[], target: { version: string; build: number; channel: string }, maximum: number): CatalogEntry[] {
  const build = String(target.build);
  return entries
    .filter((e) => e.version !== target.version && !e.yanked && e.build !== undefined)
    .filter((e) => e.channel === target.channel || e.channel === DEFAULT_CHANNEL)
    .filter((e) => compareSparkleVersions(e.build!, build) < 0)
    .sort((a, b) => compareSparkleVersions(b.build!, a.build!))
    .slice(0, maximum);
}
