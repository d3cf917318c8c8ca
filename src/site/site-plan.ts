import { createHash } from "node:crypto";
import semver from "semver";
import type { RelcastConfig } from "../config/schema.js";
import { RelcastError } from "../core/errors.js";
import type { CatalogView } from "../catalog/catalog-entry.js";
import { compareAndSwap } from "../apply/compare-and-swap.js";
import { readCatalogView } from "../catalog/catalog-view.js";
import { planFeeds, type FeedChange, type FeedsPlan } from "../catalog/feeds-plan.js";
import { latestObjects } from "../catalog/latest-objects.js";
import { unrecordedAmong, type CatalogVersions } from "../catalog/latest-plan.js";
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
import { judgeCopy, sourceMissing, type Pin } from "./copy-check.js";
import { assertCatalogAgreesWithRecords } from "./record-agreement.js";
import { planLatestStrays } from "./latest-strays.js";

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
  /** With `allDownloads`: judge every download copy by its bytes against its record, not only its size (`site sync --repair`). */
  repair?: boolean;
  /** With `allDownloads`: where the copies not rewritten because their source does not hold the record's bytes are named. */
  refused?: string[];
}

const sha256Of = (bytes: Buffer) => createHash("sha256").update(bytes).digest("hex");

/** The public copies of one release: `downloads/<id>-<v>.dmg|.zip`, its delta updates, and `icons/<id>-<v>-icon.png`, with what its record pins of each. */
export function downloadCopies(record: ReleaseRecord): Array<{ from: string; to: string; pin: Pin }> {
  const au = record.autoupdate;
  const named: Array<{ name: string; pin: Pin }> = [
    { name: record.objectStore.artifactFileName, pin: { sizeBytes: record.sizeBytes, sha256: record.sha256 } },
    ...(au ? [{ name: zipFileName(record.pluginId, record.version), pin: { sizeBytes: au.sizeBytes, sha256: au.sha256 } }] : []),
    ...(au?.deltas ?? []).map((d) => ({ name: deltaFileName(record.pluginId, record.version, d.fromVersion), pin: { sizeBytes: d.sizeBytes, sha256: d.sha256 } })),
  ];
  const copies = named.map(({ name, pin }) => ({ from: versionedKey(record.version, name), to: downloadKey(name), pin }));
  if (record.icon) copies.push({ from: versionedKey(record.version, record.icon.fileName), to: iconKey(record.icon.fileName), pin: { sizeBytes: record.icon.sizeBytes, sha256: record.icon.sha256 } });
  return copies;
}

/** The disk image and (when there is one) the update zip of `want`, by file name, with what its record pins. */
function latestArtifacts(pluginId: string, want: ReleaseRecord): Array<{ name: string; ext: "dmg" | "zip"; pin: Pin }> {
  return [
    { name: want.objectStore.artifactFileName, ext: "dmg" as const, pin: { sizeBytes: want.sizeBytes, sha256: want.sha256 } },
    ...(want.autoupdate ? [{ name: zipFileName(pluginId, want.version), ext: "zip" as const, pin: { sizeBytes: want.autoupdate.sizeBytes, sha256: want.autoupdate.sha256 } }] : []),
  ];
}

/**
 * A copy planned from a judgement of its bytes (judgeCopy): skipped when it holds what the record pins,
 * rewritten from the hash-checked source (pinned to that version), or left alone with the refusal noted.
 */
async function judgedCopy(source: ObjectStore, target: ObjectStore, from: string, to: string, pin: Pin, base: Omit<CopyWrite, "from" | "key" | "needed" | "why" | "op">, why: string, refused: string[]): Promise<CopyWrite | "no-source" | undefined> {
  const verdict = await judgeCopy(source, target, from, to, pin, { contentType: base.contentType, cacheControl: base.cacheControl });
  if (verdict.kind === "no-source") return "no-source";
  if (verdict.kind === "refused") {
    refused.push(verdict.problem);
    return undefined;
  }
  if (verdict.kind === "same") return { ...base, op: "copy", from, key: to, needed: false, why: "already there" };
  const because = { missing: "missing", headers: "served with headers relcast does not write", bytes: "bytes differ from the record" }[verdict.reason];
  return { ...base, op: "copy", from, key: to, needed: true, why: `${why}: ${because}`, pinned: verdict.source };
}

/**
 * The copies of a release's downloads that are missing (or a different size) in the target; with `repair`, also those
 * whose bytes are not what the record pins (each copy read and hashed: the whole store's downloads).
 */
export async function planDownloads(source: ObjectStore, target: ObjectStore, record: ReleaseRecord, cacheControl: string, step: ApplyStepName, planned: ReadonlySet<string> = new Set(), repair?: string[]): Promise<CopyWrite[]> {
  const writes: CopyWrite[] = [];
  for (const { from, to, pin } of downloadCopies(record)) {
    const base = { step, contentType: contentTypeFor(to), cacheControl };
    if (repair && !planned.has(from)) {
      const judged = await judgedCopy(source, target, from, to, pin, base, "public download", repair);
      if (judged === "no-source") throw missingVersioned(source, from, record);
      if (judged) writes.push(judged);
      continue;
    }
    const [src, copy] = await Promise.all([source.head(from), target.head(to)]);
    if (!src && !planned.has(from)) throw missingVersioned(source, from, record);
    const same = Boolean(src && copy && copy.size === src.size);
    writes.push({ ...base, op: "copy", from, key: to, needed: !same, why: same ? "already there" : "public download" });
  }
  return writes;
}

function missingVersioned(source: ObjectStore, from: string, record: ReleaseRecord): RelcastError {
  return new RelcastError("E_VERIFY", `${source.uriFor(from)} is missing, but the catalog lists ${record.version}`, "run `relcast verify` to see what else is missing; re-run that version's publish to restore it");
}

const RELEASES_AT_ONCE = 4;

/** Every release's download copies, from the catalog parsed in full. */
async function planAllDownloads(source: ObjectStore, target: ObjectStore, cacheControl: string, repair: string[] | undefined): Promise<CopyWrite[]> {
  const got = await source.get(CATALOG_KEY);
  if (!got) return [];
  const writes: CopyWrite[] = [];
  const records = parseCatalog(got.body.toString("utf8"), source.uriFor(CATALOG_KEY)).versions;
  // The pins every copy is checked against, and every page renders, come from the catalog: it must agree with the records.
  await assertCatalogAgreesWithRecords(source, records);
  // A few releases at once (a repair reads and hashes each copy: on S3 the reads overlap); the plan keeps catalog order.
  for (let i = 0; i < records.length; i += RELEASES_AT_ONCE) {
    const batch = await Promise.all(records.slice(i, i + RELEASES_AT_ONCE).map((record) => planDownloads(source, target, record, cacheControl, "site", new Set(), repair)));
    writes.push(...batch.flat());
  }
  return writes;
}

/**
 * `releases/latest/` as the catalog says: the expected latest release's files
 * (copied when missing or a different size; `thorough`, in site sync and
 * site build: also when their bytes are not what the record pins), nothing
 * yanked, paused or lower. A higher version not in the catalog yet belongs
 * to a publish still under way and is left alone while its release record
 * is valid; without one it was planted, and is removed.
 */
async function planLatestReconcile(store: ObjectStore, pluginId: string, records: readonly ReleaseRecord[], listed: CatalogVersions, cacheControl: string, planned: ReadonlySet<string>, refused: string[] | undefined): Promise<PlannedWrite[]> {
  const writes: PlannedWrite[] = [];
  const want = expectedLatest(records);
  if (want) {
    const names = [{ name: dmgFileName(pluginId, want.version), pin: { sizeBytes: want.sizeBytes, sha256: want.sha256 } }];
    if (want.autoupdate) names.push({ name: zipFileName(pluginId, want.version), pin: { sizeBytes: want.autoupdate.sizeBytes, sha256: want.autoupdate.sha256 } });
    for (const { name, pin } of names) {
      const from = versionedKey(want.version, name);
      const to = `${LATEST_PREFIX}${name}`;
      if (planned.has(to)) continue;
      const base = { step: "site" as const, contentType: contentTypeFor(name), cacheControl };
      // A publish trusts the size (it wrote the copy); a repair (site sync, site build) hashes it against the record.
      if (refused && !planned.has(from)) {
        const judged = await judgedCopy(store, store, from, to, pin, base, `${want.version} is latest`, refused);
        // The copy cannot be made: refused like a damaged source, never taken as done.
        if (judged === "no-source") refused.push(sourceMissing(store, from, to));
        else if (judged?.needed) writes.push(judged);
        continue;
      }
      const [source, copy] = await Promise.all([store.head(from), store.head(to)]);
      if (!source && !planned.has(from)) continue;
      if (source && copy && copy.size === source.size) continue;
      writes.push({ ...base, op: "copy", from, key: to, needed: true, why: `${want.version} is latest` });
    }
  }
  const withheld = new Map(records.filter((r) => r.yanked || isPaused(r)).map((r) => [r.version, r.yanked ? "yanked" : "a paused rollout"]));
  const neverLatest = new Map(records.filter((r) => !mayBeLatest(r.version, r.channel)).map((r) => [r.version, r]));
  const present = await latestObjects(store, pluginId);
  // Higher than the catalog's latest and not in the catalog: a publish under way (its record is there, valid), or planted (no valid record: removed).
  const unlisted = [...new Set(present.filter((o) => !listed.has(o.version) && (!want || semver.gt(o.version, want.version))).map((o) => o.version))];
  const unrecorded = await unrecordedAmong(store, pluginId, unlisted, undefined);
  for (const obj of present) {
    if (planned.has(obj.key)) continue;
    const other = neverLatest.get(obj.version);
    if (unrecorded.has(obj.version)) writes.push({ step: "site", op: "delete", key: obj.key, needed: true, why: `${obj.version} is not in the catalog and ${unrecorded.get(obj.version)}` });
    else if (withheld.has(obj.version)) writes.push({ step: "site", op: "delete", key: obj.key, needed: true, why: `${obj.version} is ${withheld.get(obj.version)}` });
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
 * copies, says which version they hold, so an unchanged latest costs one read
 * (`refused` set, in site sync and site build: the copies are hashed against
 * the record too, since a same-size copy of another release, or damaged
 * bytes, pass a size check).
 */
async function planLatestDownloads(source: ObjectStore, target: ObjectStore, pluginId: string, records: readonly ReleaseRecord[], cacheControl: string, planned: ReadonlySet<string>, refused: string[] | undefined): Promise<PlannedWrite[]> {
  const want = expectedLatest(records);
  const stateKey = latestDownloadStateKey(pluginId);
  const dmg = downloadKey(latestDownloadName(pluginId, "dmg"));
  const zip = downloadKey(latestDownloadName(pluginId, "zip"));
  const current = await target.get(stateKey);
  if (!want) {
    const present = await Promise.all([dmg, zip, stateKey].map(async (key) => ((await target.head(key)) ? key : undefined)));
    return present.filter((k): k is string => k !== undefined).map((key) => ({ step: "site", op: "delete", key, needed: true, why: "no stable release" }));
  }
  const next = latestDownloadStateBytes(want);
  const stateCurrent = current?.body.equals(next) ?? false;
  const copies = latestArtifacts(pluginId, want).map(({ name, ext, pin }) => ({ from: versionedKey(want.version, name), to: ext === "dmg" ? dmg : zip, pin }));
  const why = `latest is ${want.version}`;
  const writes: PlannedWrite[] = [];
  let complete = true;
  if (refused) {
    for (const { from, to, pin } of copies) {
      const base = { step: "site" as const, contentType: contentTypeFor(to), cacheControl };
      const judged = planned.has(from) ? ({ ...base, op: "copy", from, key: to, needed: true, why } as const) : await judgedCopy(source, target, from, to, pin, base, why, refused);
      // A copy that cannot be made (its source gone) is refused, and the state does not claim it.
      if (judged === "no-source") refused.push(sourceMissing(source, from, to));
      if (judged && judged !== "no-source") writes.push(judged);
      else complete = false;
    }
    if (stateCurrent && writes.every((w) => !w.needed) && complete) return [];
  } else {
    // Current when the state is byte for byte what this plan writes for `want` and the copies are there.
    const heads = await Promise.all(copies.map((c) => target.head(c.to)));
    if (stateCurrent && heads.every(Boolean)) return [];
    for (const { from, to } of copies) {
      if (!planned.has(from) && !(await source.head(from))) continue;
      writes.push({ step: "site", op: "copy", from, key: to, contentType: contentTypeFor(to), cacheControl, needed: true, why });
    }
  }
  if (!want.autoupdate) writes.push({ step: "site", op: "delete", key: zip, needed: true, why: `${want.version} has no update archive` });
  // A copy refused (its source damaged) is not what the state would say it holds: the state waits for it.
  if (!complete) return writes;
  writes.push({
    step: "site", op: "put", key: stateKey, source: { kind: "bytes", bytes: next }, sizeBytes: next.length, sha256: sha256Of(next),
    contentType: "application/json", cacheControl, precondition: { kind: "overwrite" }, needed: !stateCurrent, why: stateCurrent ? "unchanged" : why,
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
  // `allDownloads` (site sync, site build) hashes the latest copies against their records (a few objects); `repair`
  // hashes every download copy too (the whole store's downloads). A refused copy is noted, never written.
  const refused = options.allDownloads ? (options.refused ?? []) : undefined;
  if (options.allDownloads) writes.push(...(await planAllDownloads(source, target, immutable, options.repair ? refused : undefined)));
  if (source === target) writes.push(...(await planLatestReconcile(target, config.pluginId, feeds.view.records, feeds.view.entries, mutable, planned, refused)));
  // Only site sync and site build clean up what is not a release's copy at all (a publish leaves it to them).
  if (source === target && options.allDownloads) writes.push(...(await planLatestStrays(target, config.pluginId, planned)));
  writes.push(...(await planLatestDownloads(source, target, config.pluginId, feeds.view.records, mutable, planned, refused)));
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
