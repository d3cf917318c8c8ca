import { RelcastError } from "../../core/errors.js";
import { storedKeyOf, quotedFolder } from "../../domain/record-keys.js";
import { RELEASES_PREFIX } from "../../domain/release-layout.js";
import type { ObjectStore } from "../../store/object-store.js";

/**
 * A store without a catalog normally holds no releases. If it holds release
 * records, its catalog was lost (deleted by hand, a half-copied store): a
 * publish would warn "no releases yet", skip the build-order check against
 * the releases installed copies already have, and write an appcast listing
 * only the new one. So it is refused until `relcast rebuild` restores the
 * catalog from the records. The record of `version` itself is allowed: it
 * is what an interrupted first publish leaves behind, and re-running that
 * publish finishes it.
 */
export async function refuseRecordsWithoutCatalog(store: ObjectStore, version: string, location: string): Promise<void> {
  const found: string[] = [];
  for await (const meta of store.list(RELEASES_PREFIX)) {
    const stored = storedKeyOf(meta.key);
    if (stored?.kind !== "record" || stored.folder === version) continue;
    found.push(quotedFolder(stored.folder));
    if (found.length > 3) break;
  }
  if (found.length === 0) return;
  const named = found.slice(0, 3).join(", ") + (found.length > 3 ? " and more" : "");
  throw new RelcastError(
    "E_STORE",
    `${location} has no catalog (releases/catalog.json), but it holds release records (${named}): its catalog was lost, and a publish now would ignore those releases (no build-order check, an appcast with only this release)`,
    "run `relcast rebuild` with this store to restore the catalog, appcast and site from the records, then publish again",
  );
}
