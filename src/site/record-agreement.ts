import { isDeepStrictEqual } from "node:util";
import { RelcastError } from "../core/errors.js";
import { parseStoredJson } from "../core/stored-json.js";
import { recordKey } from "../domain/release-layout.js";
import { releaseRecordSchema, type ReleaseRecord } from "../domain/record-schema.js";
import type { ObjectStore } from "../store/object-store.js";

/**
 * What a release's record pins of its bytes: the disk image, the update zip
 * (and its signature), the delta updates and the icon, by name, size and
 * SHA-256. The site copies, and renders into its pages, exactly these.
 */
function pinsOf(r: ReleaseRecord): unknown {
  const au = r.autoupdate;
  return {
    artifactFileName: r.objectStore.artifactFileName,
    objectPath: r.objectStore.objectPath,
    sizeBytes: r.sizeBytes,
    sha256: r.sha256,
    autoupdate: au && {
      sizeBytes: au.sizeBytes, sha256: au.sha256, edSignature: au.edSignature,
      deltas: (au.deltas ?? []).map((d) => ({ fromVersion: d.fromVersion, sizeBytes: d.sizeBytes, sha256: d.sha256, edSignature: d.edSignature })),
    },
    icon: r.icon && { fileName: r.icon.fileName, sizeBytes: r.icon.sizeBytes, sha256: r.icon.sha256 },
  };
}

/** Why the catalog's entry for `entry.version` may not be trusted, or undefined when its stored record pins the same bytes. */
async function disagreement(store: ObjectStore, entry: ReleaseRecord): Promise<string | undefined> {
  const key = recordKey(entry.version);
  const got = await store.get(key);
  if (!got) return `${store.uriFor(key)} is missing, but the catalog lists ${entry.version}`;
  const record = parseStoredJson(got.body, releaseRecordSchema);
  if (!record || record.version !== entry.version) return `${store.uriFor(key)} is not a valid release record of ${entry.version}`;
  if (!isDeepStrictEqual(pinsOf(record), pinsOf(entry))) return `the catalog's entry for ${entry.version} pins other bytes (size, SHA-256, signature or file name) than its record ${store.uriFor(key)}`;
  return undefined;
}

const RECORDS_AT_ONCE = 8;

/**
 * The catalog is rebuilt from the immutable records and may be edited or
 * damaged; the site copies bytes and renders hashes from it. So before a
 * site sync (or build) writes anything, every entry must pin what its
 * record pins: a lying entry would make the site publish bytes no record
 * vouches for (the copies are checked against the entry's SHA-256). The
 * pages render every release, so one disagreeing entry refuses the whole run.
 */
export async function assertCatalogAgreesWithRecords(store: ObjectStore, entries: readonly ReleaseRecord[]): Promise<void> {
  const found: string[] = [];
  // A few records at once (on S3 the reads overlap); the problems keep catalog order.
  for (let i = 0; i < entries.length; i += RECORDS_AT_ONCE) {
    const batch = await Promise.all(entries.slice(i, i + RECORDS_AT_ONCE).map((entry) => disagreement(store, entry)));
    found.push(...batch.filter((p): p is string => p !== undefined));
  }
  if (found.length === 0) return;
  throw new RelcastError(
    "E_VERIFY",
    `the catalog does not agree with the release records, so the public site was not written (nothing was):\n${found.map((p) => `  ${p}`).join("\n")}`,
    "run `relcast rebuild` to write the catalog again from the records (restore a missing or damaged record from a backup first), then run this again",
  );
}
