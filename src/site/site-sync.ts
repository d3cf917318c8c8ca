import type { RelcastConfig } from "../config/schema.js";
import { RelcastError, SourceChangedError } from "../core/errors.js";
import { applyWrites, type ApplyTarget } from "../apply/apply-write.js";
import { planLatestCleanup } from "../catalog/latest-plan.js";
import { APPCAST_KEY, CATALOG_KEY, LATEST_PREFIX } from "../domain/release-layout.js";
import type { PlannedWrite } from "../domain/release-plan.js";
import type { ObjectStore } from "../store/object-store.js";
import { planSite, storedFeeds, type SitePlanOptions } from "./site-plan.js";

const MAX_ROUNDS = 30;

/** After the rest is written (or planned, in a dry run): the copies left alone because their source is damaged fail the run, each named. */
export function refusedCopies(refused: readonly string[], dryRun = false): void {
  if (refused.length === 0) return;
  throw new RelcastError(
    "E_VERIFY",
    `${refused.length} public cop${refused.length === 1 ? "y was" : "ies were"} not ${dryRun ? "planned" : "written"}, because the release's own object is missing or does not hold the bytes its record pins:\n${refused.map((r) => `  ${r}`).join("\n")}`,
    `${dryRun ? "a real run writes everything else and fails the same way" : "everything else was written"}; restore each missing or damaged object under releases/ from a backup (then run this again), or publish that build again under a new version`,
  );
}

/** What `site sync` (or `site build`) would write now, and the copies it would refuse; nothing is written. */
export async function planSiteSync(source: ObjectStore, target: ObjectStore, config: RelcastConfig, options: SitePlanOptions): Promise<{ writes: PlannedWrite[]; refused: string[] } | undefined> {
  const refused: string[] = [];
  const feeds = await storedFeeds(source, config);
  if (!feeds) return undefined;
  return { writes: await planSite(source, target, config, feeds, { ...options, refused }), refused };
}

/** A site plan and the ETags of the feeds it was rendered from. */
export interface PlannedSite {
  writes: PlannedWrite[];
  catalogEtag: string | undefined;
  appcastEtag: string | undefined;
}

/**
 * Applies a site plan, then checks that the feeds it was rendered from are
 * still the store's; if another writer changed them meanwhile, plans the
 * site again from the feeds as they are now (the same planner) and applies
 * that, so the last writer always leaves the site matching the newest feeds.
 *
 * A copy stopped because its source was replaced (SourceChangedError: the
 * catalog, rewritten by a concurrent publish) is planned again the same way.
 *
 * A copy into `releases/latest/` is followed, as in the latest step, by the
 * cleanup planned on a fresh listing: the catalog this plan was read from
 * may predate a higher version that a concurrent publish copied there
 * meanwhile, and whichever of the two copies last then removes the lower one.
 */
export async function syncSite(t: ApplyTarget, config: RelcastConfig, options: SitePlanOptions, first?: PlannedSite): Promise<void> {
  let planned = first;
  let refused: string[] = [];
  for (let round = 1; round <= MAX_ROUNDS; round++) {
    if (!planned) {
      refused = [];
      const feeds = await storedFeeds(t.source, config);
      if (!feeds) return;
      planned = { writes: await planSite(t.source, t.target, config, feeds, { ...options, refused }), catalogEtag: feeds.catalogEtag, appcastEtag: feeds.appcastEtag };
    }
    try {
      await applyWrites(t, planned.writes);
    } catch (err) {
      // A copy whose source another writer replaced meanwhile (the catalog, mostly) was stopped with nothing
      // written: the feeds have moved on, so plan again from them, as when they change after the writes.
      if (!(err instanceof SourceChangedError)) throw err;
      planned = undefined;
      continue;
    }
    if (t.source === t.target && planned.writes.some((w) => w.op === "copy" && w.needed && w.key.startsWith(LATEST_PREFIX))) {
      // Records decide here, not the catalog this plan read: a higher version another publish is adding (its record written,
      // its feeds not yet) stays; one no valid record backs goes.
      const cleanup = await planLatestCleanup(t.target, config.pluginId, undefined, undefined);
      await applyWrites(t, cleanup.map((w) => ({ ...w, step: "site" })));
    }
    const [catalogNow, appcastNow] = await Promise.all([t.source.head(CATALOG_KEY), t.source.head(APPCAST_KEY)]);
    if (catalogNow?.etag === planned.catalogEtag && appcastNow?.etag === planned.appcastEtag) return refusedCopies(refused);
    planned = undefined;
  }
  throw new RelcastError("E_STORE", `the catalog kept changing while the public site was written (${MAX_ROUNDS} rounds)`, "many publishes at once: run `relcast site sync` when they are done");
}
