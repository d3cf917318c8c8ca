import type { RelcastConfig } from "../config/schema.js";
import { applyWrites, type ApplyTarget } from "../apply/apply-write.js";
import { compareAndSwap } from "../apply/compare-and-swap.js";
import type { FeedChange, FeedsPlan } from "../catalog/feeds-plan.js";
import type { FeedSigning } from "../catalog/feed-signing.js";
import { APPCAST_KEY, CATALOG_KEY } from "../domain/release-layout.js";
import { withWrites, writesOf, type PlannedWrite, type ReleasePlan } from "../domain/release-plan.js";
import { planFeedsAndSite } from "./site-plan.js";
import type { PlannedSite } from "./site-sync.js";

/** Keys the steps before the feeds write (the site planner counts them as there). */
export function keysBeforeFeeds(writes: readonly PlannedWrite[]): Set<string> {
  return new Set(writes.filter((w) => w.step !== "feeds" && w.step !== "site").map((w) => w.key));
}

/** The ETag a feed has after its write: the one the write returned, or the one it was planned at (unchanged). */
function etagLeft(t: ApplyTarget, writes: readonly PlannedWrite[], key: string): string | undefined {
  const w = writes.find((x) => x.key === key);
  if (w?.needed) return t.etags.get(key);
  return w?.op === "put" && w.precondition.kind === "if-match" ? w.precondition.etag ?? undefined : undefined;
}

/**
 * Carries out the plan's `feeds` writes (catalog, appcast, catalog index,
 * each conditional on the ETag it was planned at), inside the one
 * compare-and-swap loop: a lost race plans the feeds and the site again, by
 * the same code, from the store as it is now. Returns the plan as applied
 * and the site to write from it.
 */
export async function applyFeeds(
  t: ApplyTarget, config: RelcastConfig, change: FeedChange, workDir: string, plan: ReleasePlan, signing: FeedSigning = {},
): Promise<{ plan: ReleasePlan; site: PlannedSite; feeds: FeedsPlan | undefined }> {
  let current = plan;
  let replanned: FeedsPlan | undefined;
  const planned = keysBeforeFeeds(plan.writes);
  const applied = await compareAndSwap(
    "the feeds",
    async (attempt) => {
      const { feeds, site } = await planFeedsAndSite(t.target, config, change, workDir, planned, attempt + 1, signing);
      current = withWrites(current, ["feeds", "site"], [...feeds.writes, ...site]);
      replanned = feeds;
      t.log("the feeds changed meanwhile: planned them again");
      return feeds.writes as PlannedWrite[];
    },
    (writes) => applyWrites(t, writes),
    writesOf(plan, "feeds"),
  );
  const site = { writes: writesOf(current, "site"), catalogEtag: etagLeft(t, applied, CATALOG_KEY), appcastEtag: etagLeft(t, applied, APPCAST_KEY) };
  return { plan: current, site, feeds: replanned };
}
