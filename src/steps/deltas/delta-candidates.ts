import type { CatalogEntry } from "../../catalog/catalog-entry.js";
import { DEFAULT_CHANNEL } from "../../domain/build-order.js";
import { compareSparkleVersions } from "../../sparkle/version-comparator.js";

/**
 * The releases a new build gets deltas from, as generate_appcast picks them:
 * older builds only (never a newer or equal one), highest first, at most
 * `maximum`; from the release's own channel and from stable (an install on a
 * beta channel may sit on either); never a yanked release.
 */
export function deltaCandidates(entries: Iterable<CatalogEntry>, target: { version: string; build: number; channel: string }, maximum: number): CatalogEntry[] {
  const build = String(target.build);
  // The best so far, highest build first (equal builds in catalog order): one pass, at most `maximum` kept.
  const best: Array<CatalogEntry & { build: string }> = [];
  for (const e of entries) {
    if (e.version === target.version || e.yanked || e.build === undefined) continue;
    if (e.channel !== target.channel && e.channel !== DEFAULT_CHANNEL) continue;
    if (compareSparkleVersions(e.build, build) >= 0) continue;
    const at = best.findIndex((b) => compareSparkleVersions(b.build, e.build!) < 0);
    if (at === -1) best.push({ ...e, build: e.build });
    else best.splice(at, 0, { ...e, build: e.build });
    if (best.length > maximum) best.pop();
  }
  return best;
}
