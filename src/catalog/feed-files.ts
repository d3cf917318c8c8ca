import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { PreconditionFailedError } from "../core/errors.js";
import type { RelcastConfig } from "../config/schema.js";
import type { ObjectStore } from "../store/object-store.js";
import { APPCAST_CONTENT_TYPE, CACHE_NO_CACHE } from "../store/content-types.js";
import { APPCAST_KEY, CATALOG_KEY } from "../domain/release-layout.js";
import type { Catalog, ReleaseRecord } from "../domain/record-schema.js";
import { appcastLimit, appcastOptionsFor, renderAppcast } from "../domain/appcast.js";

import { buildCatalog, parseCatalog, serializeCatalog } from "../domain/catalog.js";
import { yankFields } from "../domain/yank-state.js";
import { isIndexed, writeCatalogIndex } from "./catalog-index.js";
import type { CatalogView } from "./catalog-entry.js";
import { readCatalogView, rememberView, viewWith } from "./catalog-view.js";
import { writeMergedCatalog } from "./catalog-write.js";
import { CAS_ATTEMPTS, casBackoff, casGaveUp, compareAndSwap } from "../store/compare-and-swap.js";

export async function readCatalog(store: ObjectStore): Promise<Catalog | undefined> {
  const got = await store.get(CATALOG_KEY);
  return got ? parseCatalog(got.body.toString("utf8"), store.uriFor(CATALOG_KEY)) : undefined;
}

/** Replaces the whole catalog with these records (`relcast rebuild`), by compare-and-swap. */
export async function replaceCatalog(store: ObjectStore, config: RelcastConfig, records: ReleaseRecord[]): Promise<void> {
  await compareAndSwap(store, CATALOG_KEY, () => serializeCatalog(buildCatalog(config.pluginId, records)), {
    contentType: "application/json", cacheControl: config.cacheControl?.mutable ?? CACHE_NO_CACHE,
  });
}

/**
 * Adds (or replaces, same version) one record by compare-and-swap, streaming:
 * the catalog is read once as a view (usually cached from preflight), then
 * copied entry by entry into a temp file with the record at its place, and
 * written If-Match the ETag it was read at. A re-run that changes nothing
 * writes nothing.
 */
export async function updateCatalog(store: ObjectStore, config: RelcastConfig, record: ReleaseRecord): Promise<void> {
  const limit = appcastLimit(config);
  const source = store.uriFor(CATALOG_KEY);
  const options = { contentType: "application/json", cacheControl: config.cacheControl?.mutable ?? CACHE_NO_CACHE };
  const dir = await mkdtemp(path.join(os.tmpdir(), "relcast-catalog-"));
  try {
    for (let attempt = 1; attempt <= CAS_ATTEMPTS; attempt++) {
      const view = await readCatalogView(store, limit);
      try {
        if (!view) {
          const text = serializeCatalog(buildCatalog(config.pluginId, [record]));
          const { etag } = await store.put(CATALOG_KEY, text, { ...options, ifNoneMatch: "*" });
          rememberView(store, viewWith({ etag: "", pluginId: config.pluginId, count: 0, entries: [], records: [] }, record, etag, limit), limit);
          return;
        }
        const got = await store.getStream(CATALOG_KEY);
        if (!got || got.meta.etag !== view.etag) {
          got?.stream.destroy();
          continue; // changed since the view was read: read it again
        }
        const previous = view.records.find((r) => r.version === record.version);
        const merged = previous?.yanked && !record.yanked ? { ...record, ...yankFields(previous) } : record;
        const file = path.join(dir, `catalog-${attempt}.json`);
        const { changed, firstOffset } = await writeMergedCatalog(source, got.stream as AsyncIterable<Buffer>, view, merged, file);
        if (!changed) return;
        const { etag } = await store.put(CATALOG_KEY, { file }, { ...options, ifMatch: view.etag });
        rememberView(store, { ...viewWith(view, merged, etag, limit), firstOffset }, limit);
        return;
      } catch (err) {
        if (!(err instanceof PreconditionFailedError)) throw err;
        await casBackoff(attempt);
      }
    }
    throw casGaveUp(CATALOG_KEY);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * Renders the appcast from the catalog read *after* taking the appcast's
 * ETag, and writes it If-Match that ETag. Whoever writes last therefore
 * rendered from a catalog that holds every earlier publisher's record.
 */
export async function regenerateAppcast(store: ObjectStore, config: RelcastConfig): Promise<void> {
  const limit = appcastLimit(config);
  const cacheControl = config.cacheControl?.mutable ?? CACHE_NO_CACHE;
  let rendered: CatalogView | undefined;
  await compareAndSwap(
    store,
    APPCAST_KEY,
    async () => {
      rendered = await readCatalogView(store, limit);
      return renderAppcast(rendered?.records ?? [], appcastOptionsFor(config));
    },
    { contentType: APPCAST_CONTENT_TYPE, cacheControl },
  );
  // Then the index of the catalog the appcast was rendered from, unless it is already there.
  if (rendered && !isIndexed(rendered)) await writeCatalogIndex(store, rendered, limit, cacheControl);
}
