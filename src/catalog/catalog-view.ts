import { expectedLatest } from "../domain/latest-choice.js";
import { CATALOG_KEY } from "../domain/release-layout.js";
import type { Catalog, ReleaseRecord } from "../domain/record-schema.js";
import type { ObjectStore } from "../store/object-store.js";
import type { BuildOrderEntry } from "../domain/build-order.js";
import { appcastRecords } from "../domain/appcast-selection.js";
import { isYanked } from "../domain/yank-state.js";
import { isPaused } from "../domain/rollout-state.js";
import { CatalogEntries, entryOf, type CatalogView } from "./catalog-entry.js";
import { readTrustedIndex, type IndexTrust } from "./catalog-index-signature.js";
import { compareNewestFirst, firstEntryOffset, parseCatalog } from "../domain/catalog.js";

/** How many of the newest releases index.html shows (the catalog JSON lists them all). */
export const PAGE_RELEASES = 50;

/** The build-order entries of a view's releases, read from its entries at each iteration (releases without a build are left out). */
export function buildOrderEntriesOf(view: CatalogView | undefined): Iterable<BuildOrderEntry> {
  return {
    *[Symbol.iterator]() {
      for (const e of view?.entries ?? []) if (e.build !== undefined) yield { version: e.version, build: e.build, channel: e.channel };
    },
  };
}

/** The full records a view keeps (see {@link CatalogView}); `maxPerChannel` undefined = every appcast record. */
function keptRecords(ordered: readonly ReleaseRecord[], maxPerChannel: number | undefined): ReleaseRecord[] {
  // One more than the pages show: a release that opens a new archive page also changes the page before (site/archive-pages.ts).
  const keep = new Set<ReleaseRecord>(ordered.slice(0, PAGE_RELEASES + 1));
  for (const r of appcastRecords(ordered, maxPerChannel)) keep.add(r);
  const latest = expectedLatest(ordered);
  if (latest) keep.add(latest);
  for (const r of ordered) if (isYanked(r) || isPaused(r)) keep.add(r);
  return ordered.filter((r) => keep.has(r));
}

/**
 * The view of a parsed catalog (every entry checked against §2.6 by
 * {@link parseCatalog}). `firstOffset`: where the first entry starts in the
 * bytes it was read from, if known.
 */
export function viewOfCatalog(catalog: Catalog, etag: string, maxPerChannel: number | undefined, firstOffset?: number): CatalogView {
  return { etag, pluginId: catalog.pluginId, count: catalog.versions.length, entries: CatalogEntries.of(catalog.versions.map(entryOf)), records: keptRecords(catalog.versions, maxPerChannel), firstOffset };
}

/** Reads a view from the catalog's bytes: parsed in full, a broken catalog is an E_CATALOG error naming the file and the field. */
export function viewFromBytes(source: string, etag: string, bytes: Buffer, maxPerChannel: number | undefined): CatalogView {
  const catalog = parseCatalog(bytes.toString("utf8"), source);
  return viewOfCatalog(catalog, etag, maxPerChannel, firstEntryOffset(bytes, catalog));
}

/** Whether `record` goes in front of every entry: newer than the newest, and no release of its version listed. */
export function goesFirst(view: CatalogView, record: ReleaseRecord): boolean {
  const first = view.entries.first();
  return !view.entries.has(record.version) && (first === undefined || compareNewestFirst(first, record) > 0);
}

/** The view after `record` was written in front of the catalog (see {@link goesFirst}; no re-read), with the ETag the write returned. */
export function viewWithNewest(view: CatalogView, record: ReleaseRecord, etag: string, maxPerChannel: number | undefined, firstOffset: number): CatalogView {
  return { etag, pluginId: view.pluginId, count: view.count + 1, entries: view.entries.withFirst(entryOf(record)), records: keptRecords([record, ...view.records], maxPerChannel), firstOffset };
}

// One catalog view per store and ETag: a publish reads the catalog in preflight
// and then finds it unchanged (or changed only by its own write) in every later step.
const cache = new Map<string, CatalogView>();

function cacheKey(store: ObjectStore, etag: string, maxPerChannel: number | undefined): string {
  return `${store.uriFor(CATALOG_KEY)}\n${etag}\n${maxPerChannel ?? "all"}`;
}

function rememberView(store: ObjectStore, view: CatalogView, maxPerChannel: number | undefined): void {
  if (cache.size >= 4) cache.delete(cache.keys().next().value!);
  cache.set(cacheKey(store, view.etag, maxPerChannel), view);
}

/**
 * The store's current catalog as a view; undefined when nothing is published
 * yet. From the catalog index only when `trust` is given and the run's key
 * signed it (catalog-index-signature.ts): a run without the key reads the
 * catalog itself.
 */
export async function readCatalogView(store: ObjectStore, maxPerChannel: number | undefined, trust?: IndexTrust): Promise<CatalogView | undefined> {
  const head = await store.head(CATALOG_KEY);
  if (!head) return undefined;
  const hit = cache.get(cacheKey(store, head.etag, maxPerChannel));
  if (hit) return hit;
  const indexed = trust ? await readTrustedIndex(store, head.etag, maxPerChannel, trust) : undefined;
  if (indexed) {
    rememberView(store, indexed, maxPerChannel);
    return indexed;
  }
  const got = await store.get(CATALOG_KEY);
  if (!got) return undefined;
  const view = viewFromBytes(store.uriFor(CATALOG_KEY), got.meta.etag, got.body, maxPerChannel);
  rememberView(store, view, maxPerChannel);
  return view;
}
