import semver from "semver";
import { expectedLatest } from "../domain/latest-choice.js";
import type { ReleaseRecord } from "../domain/record-schema.js";
import { dmgFileName, LATEST_PREFIX, recordKey, versionedKey, zipFileName } from "../domain/release-layout.js";
import { versionOfLatestKey } from "../catalog/latest-objects.js";
import type { ObjectStore } from "../store/object-store.js";
import { downloadObject, type HashTally } from "./download-object.js";


/**
 * Both read and hashed; a folder store's copy is a hard link to the original, and when both are that very file,
 * already hashed in this run (`tally.memo`), neither is read again. The original is not counted a second time.
 */
async function sameBytes(store: ObjectStore, copyKey: string, originalKey: string, tally?: HashTally): Promise<boolean> {
  const uncounted: HashTally = { objects: 0, bytes: 0, ...(tally?.memo ? { memo: tally.memo } : {}) };
  const [copy, original] = await Promise.all([
    downloadObject(store, copyKey, { ...(tally ? { tally } : {}), sameAs: [originalKey] }),
    downloadObject(store, originalKey, { tally: uncounted, sameAs: [originalKey] }),
  ]);
  return !copy || !original || (copy.sha256 === original.sha256 && copy.sizeBytes === original.sizeBytes);
}

/**
 * Whether a latest copy holds the bytes the record pins (size and SHA-256): judged against the record, as the
 * repair judges it, so a damaged original (named in its release's row) does not make a right copy look wrong.
 * Without a SHA-256 in the record (older disk images), against the original's bytes.
 */
async function holdsRecordBytes(store: ObjectStore, key: string, want: ReleaseRecord, name: string, tally?: HashTally): Promise<boolean> {
  const pin = name.endsWith(".zip") ? { sha256: want.autoupdate?.sha256, sizeBytes: want.autoupdate?.sizeBytes } : { sha256: want.sha256, sizeBytes: want.sizeBytes };
  const original = versionedKey(want.version, name);
  if (pin.sha256 === undefined) return sameBytes(store, key, original, tally);
  const copy = await downloadObject(store, key, { ...(tally ? { tally } : {}), sameAs: [original] });
  return !copy || (copy.sha256 === pin.sha256 && copy.sizeBytes === pin.sizeBytes);
}

export interface LatestFindings {
  problems: string[];
  /** States an interrupted publish leaves and its re-run clears; reported, not failed. */
  warnings: string[];
}

/** A version in latest/ above the catalog's whose record exists: what a publish stopped before its feeds step leaves. */
async function pendingVersion(store: ObjectStore, pluginId: string, keys: Iterable<string>, want: ReleaseRecord | undefined, records: readonly ReleaseRecord[]): Promise<string | undefined> {
  const versions = [...new Set([...keys].map((k) => versionOfLatestKey(k, pluginId)))].filter(
    (v): v is string => v !== undefined && (!want || semver.gt(v, want.version)) && !records.some((r) => r.version === v),
  );
  const highest = versions.sort(semver.rcompare)[0];
  return highest && (await store.head(recordKey(highest))) ? highest : undefined;
}

/**
 * `releases/latest/` holds exactly the expected release's disk image and zip
 * (when it has one), byte for byte the versioned objects, and nothing
 * older. A publish stopped between its `latest` and `feeds` steps leaves a
 * higher version there (with its record) and maybe the old one: its re-run
 * clears that, so it is a warning as long as every object is byte for byte
 * one of those two releases.
 */
export async function checkLatest(store: ObjectStore, pluginId: string, records: readonly ReleaseRecord[], tally?: HashTally): Promise<LatestFindings> {
  const want = expectedLatest(records);
  const found: LatestFindings = { problems: [], warnings: [] };
  const present = new Set<string>();
  for await (const meta of store.list(LATEST_PREFIX)) present.add(meta.key);
  const namesOf = (version: string, withZip: boolean) => [dmgFileName(pluginId, version), ...(withZip ? [zipFileName(pluginId, version)] : [])];
  const expectedNames = want ? namesOf(want.version, want.autoupdate !== undefined) : [];
  const pending = await pendingVersion(store, pluginId, present, want, records);
  if (pending) {
    const allowed = new Map([...namesOf(pending, true).map((n) => [n, pending] as const), ...expectedNames.map((n) => [n, want!.version] as const)]);
    for (const key of present) {
      const name = key.slice(LATEST_PREFIX.length);
      const version = allowed.get(name);
      if (!version) found.problems.push(`${key} should not be in latest/ (a publish of ${pending} was interrupted; latest is ${want?.version ?? "empty"} or ${pending})`);
      else if (!(await sameBytes(store, key, versionedKey(version, name), tally))) found.problems.push(`${key} differs from ${versionedKey(version, name)}: run \`relcast site sync\` to copy it again`);
    }
    found.warnings.push(`latest/ holds ${pending}, which has a record but is not in the catalog yet (an interrupted publish); re-run that publish or relcast rebuild`);
    return found;
  }
  for (const name of expectedNames) {
    const key = `${LATEST_PREFIX}${name}`;
    if (!present.has(key)) found.problems.push(`${key} is missing; latest must hold ${want!.version}, the highest stable version`);
    else if (!(await holdsRecordBytes(store, key, want!, name, tally))) found.problems.push(`${key} differs from ${versionedKey(want!.version, name)}: run \`relcast site sync\` to copy it again`);
  }
  for (const key of present) {
    if (!expectedNames.some((n) => key === `${LATEST_PREFIX}${n}`)) found.problems.push(`${key} should not be in latest/ (latest is ${want?.version ?? "empty: no stable release"}): run \`relcast site sync\` to remove it`);
  }
  return found;
}
