import type { ReleaseRecord } from "./record-schema.js";
import { DEFAULT_CHANNEL } from "./build-order.js";
import { compareSparkleVersions } from "../sparkle/version-comparator.js";
import { isYanked } from "./yank-state.js";
import { isPaused } from "./rollout-state.js";

export type FeedRecord = ReleaseRecord & { autoupdate: NonNullable<ReleaseRecord["autoupdate"]> };


/**
 * The records the appcast lists, in the order given (catalog order): every
 * record with an auto-update archive that is neither yanked nor a paused
 * rollout; with a limit, only
 * the N highest `sparkle:version`s of each channel (as generate_appcast's
 * --maximum-versions keeps the highest versions per branch, so a late
 * backport never pushes the newest release out of the feed).
 */
export function appcastRecords(records: readonly ReleaseRecord[], maxItemsPerChannel?: number): FeedRecord[] {
  const offered = records.filter((r): r is FeedRecord => r.autoupdate !== undefined && !isYanked(r) && !isPaused(r));
  if (maxItemsPerChannel === undefined) return offered;
  const kept = new Set<FeedRecord>();
  const channels = new Set(offered.map((r) => r.channel || DEFAULT_CHANNEL));
  for (const channel of channels) {
    offered
      .filter((r) => (r.channel || DEFAULT_CHANNEL) === channel)
      .sort((a, b) => compareSparkleVersions(String(b.autoupdate.buildNumber), String(a.autoupdate.buildNumber)))
      .slice(0, maxItemsPerChannel)
      .forEach((r) => kept.add(r));
  }
  return offered.filter((r) => kept.has(r));
}
