import { RelcastError } from "../../core/errors.js";
import { buildCatalog } from "../../domain/catalog.js";
import { refuseStoredBuildOrder } from "../../domain/build-order.js";
import { quotedFolder } from "../../domain/record-keys.js";
import { dmgFileName, recordKey, versionedKey, zipFileName } from "../../domain/release-layout.js";
import { readAllRecords } from "../../catalog/stored-records.js";
import { viewOfCatalog } from "../../catalog/catalog-view.js";
import type { CatalogView } from "../../catalog/catalog-entry.js";
import type { ObjectStore } from "../../store/object-store.js";

/**
 * A store without a catalog normally holds no releases. When it holds
 * records of other versions, they are either publishes running right now
 * (each writes its record, then creates the catalog; a first publish racing
 * another sees the other's record before its catalog) or releases whose
 * catalog was lost (deleted by hand, a half-copied store). Either way they
 * are releases installed copies may have: this publish checks its build
 * order, channel and continuity against them, and the catalog it creates
 * lists them (planFeeds reads the records again when it creates one), as
 * `relcast rebuild` would. Returns them as a view, undefined when there are
 * none. Records that cannot be read, or whose builds rank against their
 * versions, are refused as rebuild refuses them: a guess would hide or
 * misorder a release. The record of `version` itself is what an interrupted
 * first publish leaves behind; the preflight checks it as a re-run's.
 */
export async function recordsWithoutCatalog(
  store: ObjectStore, pluginId: string, version: string, location: string, maxPerChannel: number | undefined, warn: (message: string) => void,
): Promise<CatalogView | undefined> {
  const { records, skipped, objectKeys } = await readAllRecords(store, pluginId);
  const unreadable = skipped.filter((s) => s.key !== recordKey(version));
  if (unreadable.length > 0) {
    throw new RelcastError(
      "E_STORE",
      `${location} has no catalog (releases/catalog.json), and ${unreadable.length} of its release record(s) cannot be used: ${unreadable.slice(0, 3).map((s) => `${s.key} (${s.reason})`).join(", ")}${unreadable.length > 3 ? " and more" : ""}; a catalog created now would leave those releases out`,
      "fix or remove those records (relcast verify names them all), then run `relcast rebuild` with this store and publish again",
    );
  }
  const others = records.filter((r) => r.version !== version);
  if (others.length === 0) return undefined;
  refuseStoredBuildOrder(others, `${location} has no catalog`);
  // A record whose disk image or zip is gone (a half-copied store) would put a broken download into the feeds.
  // One listing (readAllRecords's) answers for every record, where a HEAD each would cost two requests a release.
  // A record without `autoupdate` names no zip (a release published without one): only its disk image is expected.
  const missing = others
    .flatMap((r) => [dmgFileName(pluginId, r.version), ...(r.autoupdate ? [zipFileName(pluginId, r.version)] : [])].map((name) => versionedKey(r.version, name)))
    .filter((key) => !objectKeys.has(key));
  if (missing.length > 0) {
    throw new RelcastError(
      "E_STORE",
      `${location} has no catalog, and release records name objects it does not hold: ${missing.slice(0, 3).join(", ")}${missing.length > 3 ? ` and ${missing.length - 3} more` : ""}; a catalog created now would offer downloads that do not exist`,
      "copy the missing objects back into the store (or remove the records of those releases), then run `relcast rebuild` with this store and publish again",
    );
  }
  const named = others.slice(0, 3).map((r) => quotedFolder(r.version)).join(", ") + (others.length > 3 ? ` and ${others.length - 3} more` : "");
  warn(
    `${location} has no catalog (releases/catalog.json) but holds the records of ${others.length} release(s) (${named}): publishes running now, or a lost catalog. ` +
      "This publish checks against them and lists them in the catalog it creates, as `relcast rebuild` would",
  );
  return viewOfCatalog(buildCatalog(pluginId, others), "", maxPerChannel);
}
