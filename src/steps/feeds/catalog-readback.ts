import { RelcastError } from "../../core/errors.js";
import { parseCatalog } from "../../domain/catalog.js";
import { CATALOG_KEY } from "../../domain/release-layout.js";
import type { ReleaseRecord } from "../../domain/record-schema.js";
import type { ObjectStore } from "../../store/object-store.js";

/** Whether a catalog entry is this run's release: same version, same disk image, same zip. */
function isOwn(entry: ReleaseRecord, record: ReleaseRecord): boolean {
  return entry.version === record.version && entry.sha256 === record.sha256 && entry.autoupdate?.sha256 === record.autoupdate?.sha256;
}

/**
 * After the feeds are written: the catalog read back from the store (not from what this
 * run remembers writing) must list this release. When its ETag is still the
 * one this run's write returned, it holds this run's bytes; otherwise it is
 * read and parsed. On a store that loses
 * conditional writes a concurrent publish's catalog can replace ours after
 * our write "succeeded"; this says so instead of reporting success.
 */
export async function assertCatalogHolds(store: ObjectStore, record: ReleaseRecord, writtenEtag: string | undefined): Promise<void> {
  const uri = store.uriFor(CATALOG_KEY);
  // Still the very bytes this run wrote (which list the release): no need to read a large catalog in full.
  if (writtenEtag !== undefined && (await store.head(CATALOG_KEY))?.etag === writtenEtag) return;
  const got = await store.get(CATALOG_KEY);
  const entry = got ? parseCatalog(got.body.toString("utf8"), uri).versions.find((r) => r.version === record.version) : undefined;
  if (entry && isOwn(entry, record)) return;
  const found = !got ? "there is no catalog" : entry ? `it lists ${record.version} with other bytes (sha256 ${entry.sha256 ?? "none"}, not ${record.sha256 ?? "none"})` : `it does not list ${record.version}`;
  throw new RelcastError(
    "E_STORE",
    `the store lost this publish's write: the catalog read back from ${uri} after the feeds were written does not hold this release (${found}). ` +
      "Another run wrote the catalog at the same time and the store did not refuse one of the two writes",
    "run `relcast verify` to see what the store holds; re-run the same command to add this release again; and use a store that enforces conditional writes (see docs/s3-store.md)",
  );
}
