import semver from "semver";
import { isPrerelease } from "../domain/version-input.js";
import { DEFAULT_CHANNEL } from "../domain/build-order.js";
import { LATEST_PREFIX, recordKey } from "../domain/release-layout.js";
import { releaseRecordSchema } from "../domain/record-schema.js";
import type { PlannedWrite } from "../domain/release-plan.js";
import { contentTypeFor } from "../store/content-types.js";
import type { ObjectStore } from "../store/object-store.js";
import { latestObjects, yankedAmong } from "./latest-objects.js";
import { pausedAmong } from "./rollout-marker.js";

/** The versions a catalog lists (a view's entries, or a set). */
export type CatalogVersions = Pick<ReadonlySet<string>, "has">;

/** Why `version`'s stored record does not back it, or undefined: a record relcast wrote for this version and plugin. */
async function recordProblem(store: ObjectStore, pluginId: string, version: string): Promise<string | undefined> {
  const got = await store.get(recordKey(version));
  if (!got) return "no release record backs it (not published by relcast)";
  let raw: unknown;
  try {
    raw = JSON.parse(got.body.toString("utf8"));
  } catch {
    return "its release record is not JSON (not published by relcast)";
  }
  const parsed = releaseRecordSchema.safeParse(raw);
  if (!parsed.success) return "its release record is not one relcast writes";
  if (parsed.data.version !== version) return `its release record is that of ${parsed.data.version}`;
  if (parsed.data.pluginId !== pluginId) return `its release record belongs to plugin ${parsed.data.pluginId}`;
  return undefined;
}

/**
 * Versions in `releases/latest/` that no valid release record backs: none,
 * an unreadable one, or one of another version or plugin. Every publish
 * writes its record before its latest copies, so such an object was put
 * there by hand or by another tool: it never counts as the latest (else a
 * planted `p-9.9.9.dmg` beside a planted record would keep every later
 * publish from replacing it) and is removed like an older one. `adding`'s
 * record is written by this run. Exported for the site plan, which holds
 * `releases/latest/` to the same rule.
 */
export async function unrecordedAmong(store: ObjectStore, pluginId: string, versions: readonly string[], adding: string | undefined): Promise<Map<string, string>> {
  const found = await Promise.all(versions.filter((v) => v !== adding).map(async (v) => [v, await recordProblem(store, pluginId, v)] as const));
  return new Map(found.filter((f): f is readonly [string, string] => f[1] !== undefined));
}

/**
 * Versions that may not be latest now, and why: yanked, a paused rollout, no
 * valid release record, or (`catalog`: the versions the run's catalog lists,
 * the authority) not in the catalog. A version about to be published
 * (`adding`) is not in the catalog yet. The plan passes the catalog (a
 * planted record that passes the schema still is not listed); the cleanups
 * after the copies pass none, so a publish under way (record written, feeds
 * not yet) keeps what it copied.
 */
async function withheldAmong(store: ObjectStore, pluginId: string, versions: readonly string[], adding: string | undefined, catalog: CatalogVersions | undefined): Promise<Map<string, string>> {
  const [yanked, paused, unrecorded] = await Promise.all([yankedAmong(store, versions), pausedAmong(store, versions), unrecordedAmong(store, pluginId, versions, adding)]);
  const unlisted = catalog ? versions.filter((v) => v !== adding && !catalog.has(v)) : [];
  return new Map([
    ...unlisted.map((v) => [v, "not in the catalog"] as const),
    ...unrecorded,
    ...[...paused].map((v) => [v, "rollout paused"] as const),
    ...[...yanked].map((v) => [v, "yanked"] as const),
  ]);
}

/**
 * The deletes that leave `releases/latest/` holding only the highest
 * version that is not yanked (`adding`: a version about to be copied there).
 * The latest step calls this again after its copies, on a fresh listing, so
 * concurrent publishers converge on the highest version without a shared
 * pointer.
 */
export async function planLatestCleanup(store: ObjectStore, pluginId: string, adding: string | undefined, catalog: CatalogVersions | undefined): Promise<PlannedWrite[]> {
  const present = await latestObjects(store, pluginId);
  const versions = [...new Set([...present.map((p) => p.version), ...(adding ? [adding] : [])])];
  const withheld = await withheldAmong(store, pluginId, versions, adding, catalog);
  const highest = semver.rsort(versions.filter((v) => !withheld.has(v)))[0];
  return present
    .filter((o) => withheld.has(o.version) || (highest !== undefined && semver.lt(o.version, highest)))
    .map((o) => ({ step: "latest", op: "delete", key: o.key, needed: true, why: withheld.get(o.version) ?? `older than ${highest}` }));
}

/**
 * Whether this release becomes `releases/latest/` (the highest version on
 * the stable channel that is neither a prerelease nor yanked), the copies that make it so, and the deletes
 * of what it replaces.
 */
export async function planLatest(store: ObjectStore, pluginId: string, version: string, channel: string, versionedKeys: readonly string[], cacheControl: string, catalog: CatalogVersions | undefined): Promise<{ latest: { update: boolean; reason: string }; writes: PlannedWrite[] }> {
  const present = [...new Set((await latestObjects(store, pluginId)).map((o) => o.version))];
  const withheld = await withheldAmong(store, pluginId, [...new Set([...present, version])], version, catalog);
  const highest = semver.rsort(present.filter((v) => !withheld.has(v)))[0];
  const copies = versionedKeys.map((from) => ({ from, to: `${LATEST_PREFIX}${from.split("/").pop()}` }));
  const complete = async () => {
    for (const { from, to } of copies) {
      const [source, copy] = await Promise.all([store.head(from), store.head(to)]);
      if (!source || !copy || source.size !== copy.size) return false;
    }
    return true;
  };
  let reason: string | undefined;
  if (withheld.has(version)) reason = `unchanged: ${version} is ${withheld.get(version)}`;
  else if (isPrerelease(version)) reason = `unchanged: ${version} is a prerelease`;
  else if (channel !== DEFAULT_CHANNEL) reason = `unchanged: ${version} is on the ${channel} channel`;
  else if (highest && semver.gt(highest, version)) reason = `unchanged: ${highest} is higher than ${version}`;
  else if (highest === version && (await complete())) reason = `unchanged: ${version} is already latest`;
  if (reason) return { latest: { update: false, reason }, writes: [] };
  const writes: PlannedWrite[] = copies.map(({ from, to }) => ({
    step: "latest", op: "copy", from, key: to, contentType: contentTypeFor(to), cacheControl, needed: true, why: `${version} is the highest stable version`,
  }));
  writes.push(...(await planLatestCleanup(store, pluginId, version, catalog)));
  return {
    latest: { update: true, reason: `${LATEST_PREFIX}${pluginId}-${version}.dmg|.zip${highest && highest !== version ? ` (replaces ${highest})` : ""}` },
    writes,
  };
}
