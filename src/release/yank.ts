import type { RelcastConfig } from "../config/schema.js";
import { RelcastError } from "../core/errors.js";
import { parseCatalog } from "../domain/catalog.js";
import type { PlannedWrite } from "../domain/release-plan.js";
import { applyChange } from "./apply-change.js";
import type { FeedSigning } from "../catalog/feed-signing.js";
import { expectedLatest } from "../domain/latest-choice.js";
import type { Catalog, YankMarker } from "../domain/record-schema.js";
import { CATALOG_KEY, yankKey } from "../domain/release-layout.js";
import { CACHE_NO_CACHE } from "../store/content-types.js";
import type { ObjectStore } from "../store/object-store.js";
import { serializeYankMarker } from "../domain/yank-state.js";

export interface YankResult {
  version: string;
  latest: string | undefined;
  actions: string[];
}

/** Everything is checked before the first write: an unknown or already-(un)yanked version changes nothing. */
export async function findEntry(store: ObjectStore, version: string): Promise<Catalog["versions"][number]> {
  const got = await store.get(CATALOG_KEY);
  const catalog = got ? parseCatalog(got.body.toString("utf8"), store.uriFor(CATALOG_KEY)) : undefined;
  if (!catalog) throw new RelcastError("E_VERSION", `nothing is published in ${store.uriFor(CATALOG_KEY)}`, "check --store / the config's store");
  const entry = catalog.versions.find((r) => r.version === version);
  if (!entry) {
    const known = catalog.versions.slice(0, 8).map((r) => r.version).join(", ");
    throw new RelcastError("E_VERSION", `version ${version} is not in the catalog`, `name a published version (newest: ${known}${catalog.count > 8 ? ", …" : ""})`);
  }
  return entry;
}

async function applyYankState(store: ObjectStore, config: RelcastConfig, version: string, marker: YankMarker | undefined, signing: FeedSigning): Promise<YankResult> {
  const cacheControl = config.cacheControl?.mutable ?? CACHE_NO_CACHE;
  const bytes = marker ? Buffer.from(serializeYankMarker(marker)) : undefined;
  const markerWrite: PlannedWrite = bytes
    ? { step: "record", op: "put", key: yankKey(version), source: { kind: "bytes", bytes }, sizeBytes: bytes.length, contentType: "application/json", cacheControl, precondition: { kind: "overwrite" }, needed: true, why: "yank marker" }
    : { step: "record", op: "delete", key: yankKey(version), needed: true, why: "unyank" };
  const { feeds, actions } = await applyChange(store, config, `${marker ? "yank" : "unyank"} ${version}`, { kind: "yank-state", version, marker }, [markerWrite], { site: true, signing });
  return { version, latest: expectedLatest(feeds.view.records)?.version, actions };
}

/**
 * Takes a version out of the appcast and the latest objects; the record and
 * artifacts stay, and the catalog keeps the entry marked `yanked`.
 */
export async function yankRelease(store: ObjectStore, config: RelcastConfig, version: string, reason: string | undefined, now = new Date(), signing: FeedSigning = {}): Promise<YankResult> {
  const entry = await findEntry(store, version);
  if (entry.yanked) {
    throw new RelcastError("E_CONFLICT", `version ${version} is already yanked (${entry.yankedAt ?? "unknown time"}${entry.yankedReason ? `: ${entry.yankedReason}` : ""})`, `run \`relcast unyank ${version}\` first to yank it again with another reason`);
  }
  return applyYankState(store, config, version, { yanked: true, yankedAt: now.toISOString(), ...(reason ? { yankedReason: reason } : {}) }, signing);
}

/** Puts a yanked version back into the appcast (and into latest, if it is the highest). */
export async function unyankRelease(store: ObjectStore, config: RelcastConfig, version: string, signing: FeedSigning = {}): Promise<YankResult> {
  const entry = await findEntry(store, version);
  if (!entry.yanked) throw new RelcastError("E_CONFLICT", `version ${version} is not yanked`, "nothing to undo; `relcast verify` shows each release's state");
  return applyYankState(store, config, version, undefined, signing);
}
