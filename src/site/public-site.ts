import type { RelcastConfig } from "../config/schema.js";
import { RelcastError } from "../core/errors.js";
import { scanCatalog } from "../catalog/catalog-scan.js";
import { parseCatalogEntry, readCatalogView } from "../catalog/catalog-view.js";
import { appcastLimit } from "../domain/appcast.js";
import type { ReleaseRecord } from "../domain/record-schema.js";
import {
  APPCAST_KEY, CATALOG_KEY, CHANGELOG_KEY, deltaFileName, downloadKey, INDEX_KEY, publicAppcastKey, publicCatalogKey, versionedKey, zipFileName,
} from "../domain/release-layout.js";
import { APPCAST_CONTENT_TYPE, CACHE_IMMUTABLE, CACHE_NO_CACHE, contentTypeFor } from "../store/content-types.js";
import type { ObjectStore } from "../store/object-store.js";
import { renderChangelogPage } from "./changelog-page.js";
import { renderDownloadsPage } from "./downloads-page.js";
import { syncLatestDownloads } from "./latest-downloads.js";
import { reconcileLatest } from "./latest-reconcile.js";
import { copyIfChanged, putIfChanged, transferObject } from "./transfer-object.js";

const MAX_ROUNDS = 30;

export interface SiteSyncOptions {
  /** Also copy every release's downloads (migration, `site build`); a publish copies only its own. */
  allDownloads?: boolean;
}

/** The two download copies of one release: `downloads/<id>-<v>.dmg|.zip`. */
export function downloadCopies(record: ReleaseRecord): Array<{ from: string; to: string }> {
  const names = [
    record.objectStore.artifactFileName,
    ...(record.autoupdate ? [zipFileName(record.pluginId, record.version)] : []),
    ...(record.autoupdate?.deltas ?? []).map((d) => deltaFileName(record.pluginId, record.version, d.fromVersion)),
  ];
  return names.map((name) => ({ from: versionedKey(record.version, name), to: downloadKey(name) }));
}

/** Copies a release's downloads that are missing (or a different size) in the target. */
export async function ensureDownloads(source: ObjectStore, target: ObjectStore, record: ReleaseRecord, cacheControl: string): Promise<string[]> {
  const done: string[] = [];
  for (const { from, to } of downloadCopies(record)) {
    const [src, copy] = await Promise.all([source.head(from), target.head(to)]);
    if (!src) throw new RelcastError("E_VERIFY", `${source.uriFor(from)} is missing, but the catalog lists ${record.version}`, "run `relcast verify` to see what else is missing; re-run that version's publish to restore it");
    if (copy && copy.size === src.size) continue;
    await transferObject(source, target, from, to, { contentType: contentTypeFor(to), cacheControl });
    done.push(`copied ${from} to ${to}`);
  }
  return done;
}

/** Every release's download copies (site sync/build), reading the catalog as a stream. */
async function ensureAllDownloads(source: ObjectStore, target: ObjectStore, cacheControl: string): Promise<string[]> {
  const got = await source.getStream(CATALOG_KEY);
  if (!got) return [];
  const done: string[] = [];
  const where = source.uriFor(CATALOG_KEY);
  await scanCatalog(where, got.stream as AsyncIterable<Buffer>, async (raw, index) => {
    done.push(...(await ensureDownloads(source, target, parseCatalogEntry(raw, index, where), cacheControl)));
  });
  return done;
}

/**
 * Writes the public site from the canonical catalog and appcast: the feeds
 * at their public paths, index.html, changelog.html, the stable latest
 * downloads, and (in one store) `releases/latest/`. Several writers may run
 * at once; each repeats until the catalog and appcast it rendered from are
 * still the current ones after its writes, so the last writer always leaves
 * the site matching the newest feeds. Downloads are copied before any feed
 * that names them.
 */
export async function syncPublicSite(source: ObjectStore, target: ObjectStore, config: RelcastConfig, options: SiteSyncOptions = {}): Promise<string[]> {
  const mutable = { cacheControl: config.cacheControl?.mutable ?? CACHE_NO_CACHE };
  const immutable = config.cacheControl?.immutable ?? CACHE_IMMUTABLE;
  const done: string[] = [];
  const limit = appcastLimit(config);
  for (let round = 1; round <= MAX_ROUNDS; round++) {
    const view = await readCatalogView(source, limit);
    if (!view) return done;
    const appcastObject = await source.get(APPCAST_KEY);
    if (options.allDownloads) done.push(...(await ensureAllDownloads(source, target, immutable)));
    if (source === target) done.push(...(await reconcileLatest(target, config.pluginId, view.records, mutable.cacheControl)));
    done.push(...(await syncLatestDownloads(source, target, config.pluginId, view.records, mutable.cacheControl)));
    if (await copyIfChanged(source, target, CATALOG_KEY, publicCatalogKey(config.pluginId), { contentType: "application/json", ...mutable })) {
      done.push(`wrote ${publicCatalogKey(config.pluginId)}`);
    }
    const pages: Array<[string, Buffer | string, string]> = [
      ...(appcastObject ? [[publicAppcastKey(config.pluginId), appcastObject.body, APPCAST_CONTENT_TYPE] as [string, Buffer, string]] : []),
      [INDEX_KEY, renderDownloadsPage(config, { count: view.count, versions: view.records }), contentTypeFor(INDEX_KEY)],
      [CHANGELOG_KEY, renderChangelogPage(config), contentTypeFor(CHANGELOG_KEY)],
    ];
    for (const [key, body, contentType] of pages) if (await putIfChanged(target, key, body, { contentType, ...mutable })) done.push(`wrote ${key}`);
    const [catalogNow, appcastNow] = await Promise.all([source.head(CATALOG_KEY), source.head(APPCAST_KEY)]);
    if (catalogNow?.etag === view.etag && appcastNow?.etag === appcastObject?.meta.etag) return done;
  }
  throw new RelcastError("E_STORE", `the catalog kept changing while the public site was written (${MAX_ROUNDS} rounds)`, "many publishes at once: run `relcast site sync` when they are done");
}
