import type { RelcastConfig } from "../config/schema.js";
import type { ObjectStore } from "../store/object-store.js";
import { APPCAST_CONTENT_TYPE, CACHE_NO_CACHE } from "../store/content-types.js";
import { APPCAST_KEY, CATALOG_KEY } from "../release/release-layout.js";
import type { Catalog, ReleaseRecord } from "../release/record-schema.js";
import { renderAppcast, type AppcastOptions } from "./appcast.js";
import { mergeIntoCatalog, parseCatalog, serializeCatalog } from "./catalog.js";
import { compareAndSwap } from "./compare-and-swap.js";

export function appcastOptionsFor(config: RelcastConfig): AppcastOptions {
  return {
    title: `${config.displayName} updates`, link: config.appUrl, description: `Updates of ${config.displayName} by ${config.publisher}`,
    maxItemsPerChannel: config.appcast?.maxAppcastItems,
  };
}

export async function readCatalog(store: ObjectStore): Promise<Catalog | undefined> {
  const got = await store.get(CATALOG_KEY);
  return got ? parseCatalog(got.body.toString("utf8"), store.uriFor(CATALOG_KEY)) : undefined;
}

/** Adds (or replaces) records in the catalog by compare-and-swap. */
export async function updateCatalog(store: ObjectStore, config: RelcastConfig, records: ReleaseRecord[], replaceAll = false): Promise<void> {
  await compareAndSwap(
    store,
    CATALOG_KEY,
    (current) => {
      let catalog: Catalog | undefined = replaceAll || !current ? undefined : parseCatalog(current.toString("utf8"), store.uriFor(CATALOG_KEY));
      for (const record of records) catalog = mergeIntoCatalog(catalog, config.pluginId, record);
      catalog ??= { pluginId: config.pluginId, count: 0, versions: [] };
      return serializeCatalog(catalog);
    },
    { contentType: "application/json", cacheControl: config.cacheControl?.mutable ?? CACHE_NO_CACHE },
  );
}

/**
 * Renders the appcast from the catalog read *after* taking the appcast's
 * ETag, and writes it If-Match that ETag. Whoever writes last therefore
 * rendered from a catalog that holds every earlier publisher's record.
 */
export async function regenerateAppcast(store: ObjectStore, config: RelcastConfig): Promise<void> {
  await compareAndSwap(
    store,
    APPCAST_KEY,
    async () => {
      const catalog = await readCatalog(store);
      return renderAppcast(catalog?.versions ?? [], appcastOptionsFor(config));
    },
    { contentType: APPCAST_CONTENT_TYPE, cacheControl: config.cacheControl?.mutable ?? CACHE_NO_CACHE },
  );
}
