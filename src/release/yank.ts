import type { RelcastConfig } from "../config/schema.js";
import { RelcastError } from "../core/errors.js";
import { parseCatalog, serializeCatalog } from "../domain/catalog.js";
import { compareAndSwap } from "../store/compare-and-swap.js";
import { readCatalog, regenerateAppcast } from "../catalog/feed-files.js";
import { expectedLatest } from "../domain/latest-choice.js";
import type { Catalog, YankMarker } from "../domain/record-schema.js";
import { CATALOG_KEY, yankKey } from "../domain/release-layout.js";
import { CACHE_NO_CACHE } from "../store/content-types.js";
import type { ObjectStore } from "../store/object-store.js";
import { syncPublicSite } from "../site/public-site.js";
import { serializeYankMarker, withYankState } from "../domain/yank-state.js";

export interface YankResult {
  version: string;
  latest: string | undefined;
  actions: string[];
}

/** Everything is checked before the first write: an unknown or already-(un)yanked version changes nothing. */
async function findEntry(store: ObjectStore, version: string): Promise<Catalog["versions"][number]> {
  const catalog = await readCatalog(store);
  if (!catalog) throw new RelcastError("E_VERSION", `nothing is published in ${store.uriFor(CATALOG_KEY)}`, "check --store / the config's store");
  const entry = catalog.versions.find((r) => r.version === version);
  if (!entry) {
    const known = catalog.versions.slice(0, 8).map((r) => r.version).join(", ");
    throw new RelcastError("E_VERSION", `version ${version} is not in the catalog`, `name a published version (newest: ${known}${catalog.count > 8 ? ", …" : ""})`);
  }
  return entry;
}

async function applyYankState(store: ObjectStore, config: RelcastConfig, version: string, marker: YankMarker | undefined): Promise<YankResult> {
  if (marker) await store.put(yankKey(version), serializeYankMarker(marker), { contentType: "application/json", cacheControl: CACHE_NO_CACHE });
  else await store.delete(yankKey(version));
  await compareAndSwap(
    store,
    CATALOG_KEY,
    (current) => {
      if (!current) return undefined;
      const catalog = parseCatalog(current.toString("utf8"), store.uriFor(CATALOG_KEY));
      return serializeCatalog({ ...catalog, versions: catalog.versions.map((r) => (r.version === version ? withYankState(r, marker) : r)) });
    },
    { contentType: "application/json", cacheControl: config.cacheControl?.mutable ?? CACHE_NO_CACHE },
  );
  await regenerateAppcast(store, config);
  const actions = await syncPublicSite(store, store, config);
  const catalog = await readCatalog(store);
  return { version, latest: expectedLatest(catalog?.versions ?? [])?.version, actions };
}

/**
 * Takes a version out of the appcast and the latest objects; the record and
 * artifacts stay, and the catalog keeps the entry marked `yanked`.
 */
export async function yankRelease(store: ObjectStore, config: RelcastConfig, version: string, reason: string | undefined, now = new Date()): Promise<YankResult> {
  const entry = await findEntry(store, version);
  if (entry.yanked) {
    throw new RelcastError("E_CONFLICT", `version ${version} is already yanked (${entry.yankedAt ?? "unknown time"}${entry.yankedReason ? `: ${entry.yankedReason}` : ""})`, `run \`relcast unyank ${version}\` first to yank it again with another reason`);
  }
  return applyYankState(store, config, version, { yanked: true, yankedAt: now.toISOString(), ...(reason ? { yankedReason: reason } : {}) });
}

/** Puts a yanked version back into the appcast (and into latest, if it is the highest). */
export async function unyankRelease(store: ObjectStore, config: RelcastConfig, version: string): Promise<YankResult> {
  const entry = await findEntry(store, version);
  if (!entry.yanked) throw new RelcastError("E_CONFLICT", `version ${version} is not yanked`, "nothing to undo; `relcast verify` shows each release's state");
  return applyYankState(store, config, version, undefined);
}
