import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import type { RelcastConfig } from "../config/schema.js";
import { applyTarget, applyWrites } from "../apply/apply-write.js";
import type { FeedChange, FeedsPlan } from "../catalog/feeds-plan.js";
import type { FeedSigning } from "../catalog/feed-signing.js";
import { APPLY_STEP_NAMES, writesOf, type PlannedWrite, type ReleasePlan } from "../domain/release-plan.js";
import type { ObjectStore } from "../store/object-store.js";
import { applyFeeds } from "../site/feeds-apply.js";
import { planFeedsAndSite } from "../site/site-plan.js";
import { syncSite } from "../site/site-sync.js";
import { appcastLimit } from "../domain/appcast.js";
import { readCatalogView } from "../catalog/catalog-view.js";
import { checkAppKey, type KeyedRelease } from "../steps/preflight/release-key.js";

/**
 * A change of the feeds other than a publish (yank, unyank, rebuild), on
 * the same plan/apply path as a publish: plan every write (the given ones,
 * then feeds and site), then carry the plan out step by step; the feeds by
 * compare-and-swap, re-planned on a lost race; the site checked against the
 * feeds it was rendered from.
 */
export async function applyChange(
  store: ObjectStore, config: RelcastConfig, title: string, change: FeedChange, before: readonly PlannedWrite[], options: { site: boolean; signing?: FeedSigning | undefined },
): Promise<{ plan: ReleasePlan; feeds: FeedsPlan; actions: string[] }> {
  const signing = options.signing ?? {};
  // Before any write (the yank or rollout marker included): a key installed copies would not accept stops the run here.
  if (signing.key && !signing.keyCheckedByBundle) await checkAppKey(store, config.pluginId, signing.key, await releasesOf(store, config, change));
  const workDir = await mkdtemp(path.join(os.tmpdir(), "relcast-"));
  try {
    const planned = new Set(before.map((w) => w.key));
    const first = await planFeedsAndSite(store, config, change, workDir, planned, 1, signing);
    let plan: ReleasePlan = { title, writes: [...before, ...first.feeds.writes, ...(options.site ? first.site : [])] };
    const actions: string[] = [];
    const t = applyTarget(store, (line) => actions.push(line));
    for (const step of APPLY_STEP_NAMES.filter((s) => s !== "feeds" && s !== "site")) await applyWrites(t, writesOf(plan, step));
    const applied = await applyFeeds(t, config, change, workDir, plan, signing);
    plan = applied.plan;
    if (options.site) await syncSite(t, config, {}, applied.site);
    return { plan, feeds: applied.feeds ?? first.feeds, actions };
  } finally {
    await rm(workDir, { recursive: true, force: true });
  }
}

/** The releases whose bundles say which key installed copies hold: a rebuild's records, else the catalog's entries. */
export async function releasesOf(store: ObjectStore, config: RelcastConfig, change: FeedChange): Promise<KeyedRelease[]> {
  if (change.kind === "replace") return change.records.flatMap((r) => (r.autoupdate ? [{ version: r.version, build: r.autoupdate.buildNumber }] : []));
  // Read without the index: the key that would vouch for it is the one being checked.
  const view = await readCatalogView(store, appcastLimit(config));
  return [...(view?.entries ?? [])].flatMap((e) => (e.build !== undefined ? [{ version: e.version, build: Number(e.build) }] : []));
}
