import { createHash } from "node:crypto";
import semver from "semver";
import type { RelcastConfig } from "../config/schema.js";
import { RelcastError } from "../core/errors.js";
import type { CatalogView } from "../catalog/catalog-entry.js";
import { compareAndSwap } from "../apply/compare-and-swap.js";
import { readCatalogView } from "../catalog/catalog-view.js";
import { planFeeds, type FeedChange, type FeedsPlan } from "../catalog/feeds-plan.js";
import { latestObjects } from "../catalog/latest-objects.js";
import { appcastLimit } from "../domain/appcast.js";
import { appcastRecords } from "../domain/appcast-selection.js";
import { hostedNotesPages, type NotesPage } from "../domain/notes/notes-page.js";
import type { FeedSigning } from "../catalog/feed-signing.js";
import { parseCatalog } from "../domain/catalog.js";
import { expectedLatest, mayBeLatest } from "../domain/latest-choice.js";
import { isPaused } from "../domain/rollout-state.js";
import { DEFAULT_CHANNEL } from "../domain/build-order.js";
import type { ReleaseRecord } from "../domain/record-schema.js";
import {
  APPCAST_KEY, CATALOG_KEY, deltaFileName, dmgFileName, downloadKey, iconKey, LATEST_PREFIX, latestDownloadName, latestDownloadStateKey,
  publicAppcastKey, publicCatalogKey, versionedKey, zipFileName,
} from "../domain/release-layout.js";
import type { ApplyStepName, ContentSource, CopyWrite, PlannedWrite } from "../domain/release-plan.js";
import { APPCAST_CONTENT_TYPE, CACHE_IMMUTABLE, CACHE_NO_CACHE, contentTypeFor } from "../store/content-types.js";
import type { ObjectStore } from "../store/object-store.js";
import { sitePages } from "./site-pages.js";
import { plannedArchivePages, type ArchiveScope } from "./archive-plan.js";
import { sameObjects, targetHolds } from "./same-bytes.js";

/** The feeds the site is written from: as a plan will leave them, or as the source store holds them. */
export interface SiteFeeds {
  view: CatalogView;
  /** The new catalog's bytes; undefined: the source store's catalog is copied as it is. */
  catalog?: { source: ContentSource; sizeBytes: number; sha256: string } | undefined;
  /** The appcast's bytes; undefined: none yet. */
  appcast: Buffer | undefined;
  /** The release-notes pages relcast hosts for the appcast's items (their signatures are in the appcast). */
  pages: readonly NotesPage[];
  /** Which archive pages the change may alter; undefined: every one (compared with what the target holds). */
  archive?: ArchiveScope | undefined;
}

export interface SitePlanOptions {
  /** Also every release's downloads (`site sync`/`site build`); a publish copies only its own. */
  allDownloads?: boolean;
  /** Keys the earlier steps of the same plan write: they count as there, and are not planned twice. */
  planned?: ReadonlySet<string>;
}

const sha256Of = (bytes: Buffer) => createHash("sha256").update(bytes).digest("hex");

/** The public copies of one release: `downloads/<id>-<v>.dmg|.zip`, its delta updates, and `icons/<id>-<v>-icon.png`. */
export function downloadCopies(record: ReleaseRecord): Array<{ from: string; to: string }> {
  const names = [
    record.objectStore.artifactFileName,
    ...(record.autoupdate ? [zipFileName(record.pluginId, record.version)] : []),
    ...(record.autoupdate?.deltas ?? []).map((d) => deltaFileName(record.pluginId, record.version, d.fromVersion)),
  ];
  const copies = names.map((name) => ({ from: versionedKey(record.version, name), to: downloadKey(name) }));
  if (record.icon) copies.push({ from: versionedKey(record.version, record.icon.fileName), to: iconKey(record.icon.fileName) });
  return copies;
}

/** The copies of a release's downloads that are missing (or a different size) in the target. */
export async function planDownloads(source: ObjectStore, target: ObjectStore, record: ReleaseRecord, cacheControl: string, step: ApplyStepName, planned: ReadonlySet<string> = new Set()): Promise<CopyWrite[]> {
  const writes: CopyWrite[] = [];
  for (const { from, to } of downloadCopies(record)) {
    const [src, copy] = await Promise.all([source.head(from), target.head(to)]);
    if (!src && !planned.has(from)) {
      throw new RelcastError("E_VERIFY", `${source.uriFor(from)} is missing, but the catalog lists ${record.version}`, "run `relcast verify` to see what else is missing; re-run that version's publish to restore it");
    }
    const same = Boolean(src && copy && copy.size === src.size);
    writes.push({ step, op: "copy", from, key: to, contentType: contentTypeFor(to), cacheControl, needed: !same, why: same ? "already there" : "public download" });
  }
  return writes;
}

/** Every release's download copies, from the catalog parsed in full. */
async function planAllDownloads(source: ObjectStore, target: ObjectStore, cacheControl: string): Promise<CopyWrite[]> {
  const got = await source.get(CATALOG_KEY);
  if (!got) return [];
  const writes: CopyWrite[] = [];
  for (const record of parseCatalog(got.body.toString("utf8"), source.uriFor(CATALOG_KEY)).versions) {
    writes.push(...(await planDownloads(source, target, record, cacheControl, "site")));
  }
  return writes;
}

/**
 * `releases/latest/` as the catalog says: the expected latest release's files
 * (copied when missing or a different size), nothing yanked, paused or lower. A
 * higher version not in the catalog yet belongs to a publish still under way
 * and is left alone.
 */
async function planLatestReconcile(store: ObjectStore, pluginId: string, records: readonly ReleaseRecord[], cacheControl: string, planned: ReadonlySet<string>, thorough: boolean): Promise<PlannedWrite[]> {
  const writes: PlannedWrite[] = [];
  const want = expectedLatest(records);
  if (want) {
    for (const name of [dmgFileName(pluginId, want.version), ...(want.autoupdate ? [zipFileName(pluginId, want.version)] : [])]) {
      const from = versionedKey(want.version, name);
      const to = `${LATEST_PREFIX}${name}`;
      if (planned.has(to)) continue;
      const [source, copy] = await Promise.all([store.head(from), store.head(to)]);
      if (!source && !planned.has(from)) continue;
      // A publish trusts the size (it wrote the copy); a repair (site sync, site build) compares the bytes.
      if (source && copy && copy.size === source.size && (!thorough || (await sameObjects(store, store, from, to)))) continue;
      writes.push({ step: "site", op: "copy", from, key: to, contentType: contentTypeFor(name), cacheControl, needed: true, why: `${want.version} is latest` });
    }
  }
  const withheld = new Map(records.filter((r) => r.yanked || isPaused(r)).map((r) => [r.version, r.yanked ? "yanked" : "a paused rollout"]));
  const neverLatest = new Map(records.filter((r) => !mayBeLatest(r.version, r.channel)).map((r) => [r.version, r]));
  for (const obj of await latestObjects(store, pluginId)) {
    if (planned.has(obj.key)) continue;
    const other = neverLatest.get(obj.version);
    if (withheld.has(obj.version)) writes.push({ step: "site", op: "delete", key: obj.key, needed: true, why: `${obj.version} is ${withheld.get(obj.version)}` });
    else if (other) writes.push({ step: "site", op: "delete", key: obj.key, needed: true, why: `${obj.version} is ${other.channel !== DEFAULT_CHANNEL ? `on the ${other.channel} channel` : "a prerelease"}` });
    else if (want && semver.lt(obj.version, want.version)) writes.push({ step: "site", op: "delete", key: obj.key, needed: true, why: `older than ${want.version}` });
  }
  return writes;
}

/** `downloads/<id>-latest.json` as the site step writes it for `want` (verify holds the stored one to these bytes). */
export function latestDownloadStateBytes(want: ReleaseRecord): Buffer {
  return Buffer.from(JSON.stringify({ version: want.version, ...(want.sha256 && { dmgSha256: want.sha256 }), ...(want.autoupdate?.sha256 && { zipSha256: want.autoupdate.sha256 }) }, null, 2) + "\n");
}

/**
 * The stable latest URLs `downloads/<id>-latest.dmg|.zip`: copies of the
 * catalog's latest stable release. A small state object, written after the
 * copies, says which version they hold, so an unchanged latest costs one read.
 */
async function planLatestDownloads(source: ObjectStore, target: ObjectStore, pluginId: string, records: readonly ReleaseRecord[], cacheControl: string, planned: ReadonlySet<string>, thorough: boolean): Promise<PlannedWrite[]> {
  const want = expectedLatest(records);
  const stateKey = latestDownloadStateKey(pluginId);
  const dmg = downloadKey(latestDownloadName(pluginId, "dmg"));
  const zip = downloadKey(latestDownloadName(pluginId, "zip"));
  const current = await target.get(stateKey);
  if (!want) {
    const present = await Promise.all([dmg, zip, stateKey].map(async (key) => ((await target.head(key)) ? key : undefined)));
    return present.filter((k): k is string => k !== undefined).map((key) => ({ step: "site", op: "delete", key, needed: true, why: "no stable release" }));
  }
  const dmgFrom = versionedKey(want.version, want.objectStore.artifactFileName);
  const zipFrom = versionedKey(want.version, zipFileName(pluginId, want.version));
  // Current when the state is byte for byte what this plan writes for `want` and the copies are there (a repair
  // compares their bytes with the versioned objects too: a same-size copy of another release passes a size check).
  const stateCurrent = current?.body.equals(latestDownloadStateBytes(want)) ?? false;
  const heads = await Promise.all([target.head(dmg), want.autoupdate ? target.head(zip) : undefined]);
  const copiesThere = Boolean(heads[0]) && (!want.autoupdate || Boolean(heads[1]));
  if (stateCurrent && copiesThere && (!thorough || ((await sameObjects(source, target, dmgFrom, dmg)) && (!want.autoupdate || (await sameObjects(source, target, zipFrom, zip)))))) return [];
  const writes: PlannedWrite[] = [];
  const copy = async (from: string, to: string) => {
    if (!planned.has(from) && !(await source.head(from))) return;
    writes.push({ step: "site", op: "copy", from, key: to, contentType: contentTypeFor(to), cacheControl, needed: true, why: `latest is ${want.version}` });
  };
  await copy(dmgFrom, dmg);
  if (want.autoupdate) await copy(zipFrom, zip);
  else writes.push({ step: "site", op: "delete", key: zip, needed: true, why: `${want.version} has no update archive` });
  const next = latestDownloadStateBytes(want);
  const same = current?.body.equals(next) ?? false;
  writes.push({
    step: "site", op: "put", key: stateKey, source: { kind: "bytes", bytes: next }, sizeBytes: next.length, sha256: sha256Of(next),
    contentType: "application/json", cacheControl, precondition: { kind: "overwrite" }, needed: !same, why: same ? "unchanged" : `latest is ${want.version}`,
  });
  return writes;
}

async function pagePut(target: ObjectStore, key: string, bytes: Buffer, contentType: string, cacheControl: string): Promise<PlannedWrite> {
  const same = await targetHolds(target, key, { kind: "bytes", bytes }, bytes.length);
  return {
    step: "site", op: "put", key, source: { kind: "bytes", bytes }, sizeBytes: bytes.length, sha256: sha256Of(bytes), contentType, cacheControl,
    precondition: { kind: "overwrite" }, needed: !same, why: same ? "unchanged" : "from the feeds",
  };
}

/**
 * Plans the public site from the feeds: the downloads, `releases/latest/`
 * (one store only), the stable latest downloads, the feeds at their public
 * paths, the archive pages, index.html and changelog.html, and the public catalog last.
 * Downloads come before any feed that names them. Writes that would change nothing are planned as skipped.
 */
export async function planSite(source: ObjectStore, target: ObjectStore, config: RelcastConfig, feeds: SiteFeeds, options: SitePlanOptions = {}): Promise<PlannedWrite[]> {
  const mutable = config.cacheControl?.mutable ?? CACHE_NO_CACHE;
  const immutable = config.cacheControl?.immutable ?? CACHE_IMMUTABLE;
  const planned = options.planned ?? new Set<string>();
  const writes: PlannedWrite[] = [];
  if (options.allDownloads) writes.push(...(await planAllDownloads(source, target, immutable)));
  // `allDownloads` is a repair (site sync, site build): it compares copies by their bytes, not only their size.
  const thorough = options.allDownloads === true;
  if (source === target) writes.push(...(await planLatestReconcile(target, config.pluginId, feeds.view.records, mutable, planned, thorough)));
  writes.push(...(await planLatestDownloads(source, target, config.pluginId, feeds.view.records, mutable, planned, thorough)));
  // Notes pages before the public appcast that links them (and, when signed, carries their signatures).
  for (const page of feeds.pages) writes.push(await pagePut(target, page.key, page.bytes, contentTypeFor(page.key), mutable));
  if (feeds.appcast) writes.push(await pagePut(target, publicAppcastKey(config.pluginId), feeds.appcast, APPCAST_CONTENT_TYPE, mutable));
  // The archive pages before the pages that link them.
  const archive = await plannedArchivePages(config, { source, target, view: feeds.view, catalog: feeds.catalog, scope: feeds.archive });
  for (const page of archive.pages) writes.push(await pagePut(target, page.key, page.bytes, contentTypeFor(page.key), mutable));
  for (const key of archive.stale) writes.push({ step: "site", op: "delete", key, needed: true, why: "past the last archive page" });
  for (const page of sitePages(config, feeds.view)) writes.push(await pagePut(target, page.key, page.bytes, contentTypeFor(page.key), mutable));
  // The public catalog goes last: while it still holds the previous catalog, `verify` knows which
  // state every other public file may be in (that one, or the new one), and nothing else passes.
  const catalogKey = publicCatalogKey(config.pluginId);
  if (feeds.catalog) {
    const same = await targetHolds(target, catalogKey, feeds.catalog.source, feeds.catalog.sizeBytes);
    writes.push({
      step: "site", op: "put", key: catalogKey, ...feeds.catalog, contentType: "application/json", cacheControl: mutable,
      precondition: { kind: "overwrite" }, needed: !same, why: same ? "unchanged" : "public copy of the catalog",
    });
  } else {
    const same = await sameObjects(source, target, CATALOG_KEY, catalogKey);
    writes.push({ step: "site", op: "copy", from: CATALOG_KEY, key: catalogKey, contentType: "application/json", cacheControl: mutable, needed: !same, why: same ? "unchanged" : "public copy of the catalog" });
  }
  return writes;
}

/** The feeds as the store holds them now, with the ETags they were read at; undefined: nothing published. */
export async function storedFeeds(store: ObjectStore, config: RelcastConfig): Promise<(SiteFeeds & { catalogEtag: string; appcastEtag: string | undefined }) | undefined> {
  const view = await readCatalogView(store, appcastLimit(config));
  if (!view) return undefined;
  const appcast = await store.get(APPCAST_KEY);
  const pages = hostedNotesPages(appcastRecords(view.records, appcastLimit(config)));
  return { view, appcast: appcast?.body, pages, catalogEtag: view.etag, appcastEtag: appcast?.meta.etag };
}

/** The archive pages a change may alter (see {@link ArchiveScope}); `view` is the catalog after it. */
function archiveScopeOf(change: FeedChange, view: CatalogView): ArchiveScope {
  if (change.kind === "add") return view.entries.first()?.version === change.record.version ? { kind: "newest" } : { kind: "all" };
  if (change.kind === "replace") return { kind: "all" };
  return { kind: "versions", versions: [change.version] };
}

/**
 * The `feeds` and `site` writes of one change, planned together: the site
 * is rendered from the feeds as they will be. A lost compare-and-swap on
 * the feeds calls this again.
 */
export async function planFeedsAndSite(
  store: ObjectStore, config: RelcastConfig, change: FeedChange, workDir: string, planned: ReadonlySet<string>, attempt = 1, signing: FeedSigning = {},
): Promise<{ feeds: FeedsPlan; site: PlannedWrite[] }> {
  // The feeds may change between the reads of one plan: plan again from what is there then.
  const feeds = await compareAndSwap("the feeds", (retry) => planFeeds(store, config, change, workDir, attempt * 100 + retry, signing), async () => {});
  const site = await planSite(store, store, config, { view: feeds.view, catalog: feeds.catalog, appcast: feeds.appcast, pages: feeds.pages, archive: archiveScopeOf(change, feeds.view) }, { planned });
  return { feeds, site };
}
