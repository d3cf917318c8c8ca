import { expectedLatest } from "../domain/latest-choice.js";
import { CATALOG_KEY } from "../domain/release-layout.js";
import type { Catalog, ReleaseRecord } from "../domain/record-schema.js";
import type { ObjectStore } from "../store/object-store.js";
import type { BuildOrderEntry } from "../domain/build-order.js";
import { appcastRecords } from "../domain/appcast-selection.js";
import { isYanked } from "../domain/yank-state.js";
import { entryOf, type CatalogEntry, type CatalogView } from "./catalog-entry.js";
import { readCatalogIndex } from "./catalog-index.js";
import { compareNewestFirst, firstEntryOffset, parseCatalog } from "../domain/catalog.js";

/** How many of the newest releases index.html shows (the catalog JSON lists them all). */
export const PAGE_RELEASES = 50;

export function buildOrderEntriesOf(view: CatalogView | undefined): BuildOrderEntry[] {
  return (view?.entries ?? []).flatMap((e) => (e.build === undefined ? [] : [{ version: e.version, build: e.build, channel: e.channel }]));
}

/** The full records a view keeps (see {@link CatalogView}); `maxPerChannel` undefined = every appcast record. */
function keptRecords(ordered: readonly ReleaseRecord[], maxPerChannel: number | undefined): ReleaseRecord[] {
  const keep = new Set<ReleaseRecord>(ordered.slice(0, PAGE_RELEASES));
  for (const r of appcastRecords(ordered, maxPerChannel)) keep.add(r);
  const latest = expectedLatest(ordered);
  if (latest) keep.add(latest);
  for (const r of ordered) if (isYanked(r)) keep.add(r);
  return ordered.filter((r) => keep.has(r));
}

/**
 * The view of a parsed catalog (every entry checked against §2.6 by
 * {@link parseCatalog}). `firstOffset`: where the first entry starts in the
 * bytes it was read from, if known.
 */
export function viewOfCatalog(catalog: Catalog, etag: string, maxPerChannel: number | undefined, firstOffset?: number): CatalogView {
  return { etag, pluginId: catalog.pluginId, count: catalog.versions.length, entries: catalog.versions.map(entryOf), records: keptRecords(catalog.versions, maxPerChannel), firstOffset };
}

/** Reads a view from the catalog's bytes: parsed in full, a broken catalog is an E_CATALOG error naming the file and the field. */
export function viewFromBytes(source: string, etag: string, bytes: Buffer, maxPerChannel: number | undefined): CatalogView {
  const catalog = parseCatalog(bytes.toString("utf8"), source);
  return viewOfCatalog(catalog, etag, maxPerChannel, firstEntryOffset(bytes, catalog));
}

/** Where `record` goes in a catalog ordered newest first, and which entry (same version) it replaces. */
export function placement(entries: readonly CatalogEntry[], record: ReleaseRecord): { insertAt: number; replaces: number } {
  const replaces = entries.findIndex((e) => e.version === record.version);
  let insertAt = 0;
  for (let i = 0; i < entries.length; i++) {
    if (i === replaces) continue;
    if (compareNewestFirst(entries[i]!, record) <= 0) insertAt = i + 1;
    else break;
  }
  return { insertAt, replaces };
}

/** The view of the catalog after `record` was merged into it (no re-read), with the ETag the write returned. */
export function viewWith(view: CatalogView, record: ReleaseRecord, etag: string, maxPerChannel: number | undefined): CatalogView {
  const { insertAt, replaces } = placement(view.entries, record);
  const entries = [...view.entries];
  entries.splice(insertAt, 0, entryOf(record));
  if (replaces !== -1) entries.splice(replaces < insertAt ? replaces : replaces + 1, 1);
  const others = view.records.filter((r) => r.version !== record.version);
  const position = others.findIndex((r) => compareNewestFirst(r, record) > 0);
  others.splice(position === -1 ? others.length : position, 0, record);
  return { etag, pluginId: view.pluginId, count: entries.length, entries, records: keptRecords(others, maxPerChannel) };
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

/** The store's current catalog as a view; undefined when nothing is published yet. */
export async function readCatalogView(store: ObjectStore, maxPerChannel: number | undefined): Promise<CatalogView | undefined> {
  const head = await store.head(CATALOG_KEY);
  if (!head) return undefined;
  const hit = cache.get(cacheKey(store, head.etag, maxPerChannel));
  if (hit) return hit;
  const indexed = await readCatalogIndex(store, head.etag, maxPerChannel);
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
