import type { Catalog } from "../domain/record-schema.js";
import { releaseRecordSchema, rolloutMarkerSchema, yankMarkerSchema } from "../domain/record-schema.js";
import { isDeepStrictEqual } from "node:util";
import { parseStoredJson } from "../core/stored-json.js";
import { quotedFolder, storedKeyOf } from "../domain/record-keys.js";
import { APPCAST_KEY, CATALOG_KEY, deltaFileName, LATEST_PREFIX, RELEASES_PREFIX, zipFileName } from "../domain/release-layout.js";
import { CATALOG_INDEX_KEY } from "../catalog/catalog-index.js";
import { isReleaseVersion } from "../domain/record-fields.js";
import type { ReleaseRecord } from "../domain/record-schema.js";
import type { ObjectStore } from "../store/object-store.js";
import { underOwnNames } from "./public-inventory.js";
import { shownNames } from "./name-list.js";

/**
 * Every `releases/<v>/release.json` and `releases/<v>/yank.json` in the
 * store, held against the catalog: a record the catalog does not list (a
 * publish interrupted after its record, or a catalog write the store lost)
 * would go live unseen at the next `rebuild` or `site sync`; a record under
 * another version's folder would be listed twice. Each is named with its
 * repair. `catalog` undefined: the store has none.
 */
export async function recordInventory(store: ObjectStore, catalog: Catalog | undefined, listAll = false): Promise<{ problems: string[]; warnings: string[] }> {
  const shown = (names: readonly string[]) => shownNames(names, listAll);
  const listed = new Map((catalog?.versions ?? []).map((r) => [r.version, r]));
  const problems: string[] = [];
  const recordFolders = new Set<string>();
  const objects = new Map<string, string[]>();
  const records = new Map<string, ReleaseRecord>();
  const yankFolders = new Set<string>();
  const rolloutFolders = new Set<string>();
  const loose: string[] = [];
  for await (const meta of store.list(RELEASES_PREFIX)) {
    const stored = storedKeyOf(meta.key);
    if (!stored) {
      const object = versionObjectOf(meta.key);
      if (object) {
        const names = objects.get(object.folder);
        if (names) names.push(object.name);
        else objects.set(object.folder, [object.name]);
      } else if (!meta.key.startsWith(LATEST_PREFIX) && !FEED_KEYS.has(meta.key)) loose.push(meta.key.slice(RELEASES_PREFIX.length));
      continue;
    }
    if (stored.kind === "yank") {
      yankFolders.add(stored.folder);
      // The marker is what rebuild and the yank state read: one they would refuse, or one that says another
      // time or reason than the catalog shows, is a problem here too.
      const got = await store.get(meta.key);
      const marker = got ? parseStoredJson(got.body, yankMarkerSchema) : undefined;
      const entry = listed.get(stored.folder);
      if (got && !marker) problems.push(`yank marker ${meta.key} is not a valid yank marker (rebuild refuses it): run \`relcast yank ${quotedFolder(stored.folder)}\` again, or \`relcast unyank\` to undo the yank`);
      else if (marker && entry?.yanked && (entry.yankedAt !== marker.yankedAt || (entry.yankedReason ?? undefined) !== (marker.yankedReason ?? undefined))) {
        problems.push(`yank marker ${meta.key} (yanked at ${marker.yankedAt}) disagrees with the catalog (yanked at ${entry.yankedAt ?? "?"}): run \`relcast rebuild\` to take the marker's state`);
      }
      continue;
    }
    if (stored.kind === "rollout") {
      rolloutFolders.add(stored.folder);
      const problem = await rolloutMarkerProblem(store, meta.key, stored.folder, listed.get(stored.folder));
      if (problem) problems.push(problem);
      continue;
    }
    recordFolders.add(stored.folder);
    const folder = quotedFolder(stored.folder);
    const got = await store.get(meta.key);
    if (!got) continue;
    const record = parseStoredJson(got.body, releaseRecordSchema);
    if (!record) {
      if (!listed.has(stored.folder)) problems.push(`record ${meta.key} is not a valid release record and the catalog does not list ${folder}: inspect it; remove it if no release ${folder} was meant to be published`);
      continue;
    }
    records.set(stored.folder, record);
    if (record.version !== stored.folder) {
      problems.push(
        `record ${meta.key} is stored under ${folder}'s folder but holds release ${record.version}: a rebuild would list ${record.version} from the wrong folder; ` +
          `move it to releases/${record.version}/release.json if that has no record, otherwise remove it (relcast rebuild refuses the store until then)`,
      );
      continue;
    }
    if (!listed.has(record.version)) {
      problems.push(
        `release ${record.version} has a record (${meta.key}) but the catalog does not list it: a publish was interrupted or the store lost its catalog write; ` +
          `check it (its objects under releases/${record.version}/), then run \`relcast rebuild\` to list it, or remove releases/${record.version}/ if it should not be published`,
      );
    }
  }
  for (const folder of yankFolders) {
    if (!recordFolders.has(folder)) problems.push(`yank marker releases/${quotedFolder(folder)}/yank.json has no record beside it: remove it (no release ${quotedFolder(folder)} exists)`);
    const entry = listed.get(folder);
    if (entry && !entry.yanked) problems.push(`release ${folder} has a yank marker but the catalog shows it as not yanked (an interrupted yank): run \`relcast rebuild\`, or \`relcast unyank ${folder}\` to undo the yank`);
  }
  for (const folder of rolloutFolders) {
    if (!recordFolders.has(folder)) problems.push(`rollout state releases/${quotedFolder(folder)}/rollout.json has no record beside it: remove it (no release ${quotedFolder(folder)} exists)`);
  }
  for (const [version, entry] of listed) {
    if (entry.rollout && !rolloutFolders.has(version)) {
      problems.push(`the catalog shows ${version}'s rollout as ${entry.rollout.paused ? "paused" : "paused before"} but releases/${version}/rollout.json is missing: run \`relcast rollout ${entry.rollout.paused ? "pause" : "resume"} ${version}\` to record it again, or \`relcast rebuild\` to drop the state`);
    }
    if (entry.yanked && !yankFolders.has(version)) problems.push(`the catalog shows ${version} as yanked but releases/${version}/yank.json is missing (an interrupted unyank): run \`relcast rebuild\`, or \`relcast yank ${version}\` to yank it again`);
  }
  const unrecorded = unrecordedObjects(objects, recordFolders, listed, records, shown);
  const warnings = [...unrecorded.warnings];
  if (loose.length > 0) {
    warnings.push(`releases/ holds ${loose.length} object(s) outside any version folder (${shown(loose)}): relcast keeps only the catalog, its index and the appcast there, so nothing offers them; delete them, or move a release's file into releases/<version>/`);
  }
  for (const name of (await store.undecodableNames?.()) ?? []) {
    // A static host serves a file of any name (its URL percent-encodes the bytes): under the plugin's own public
    // names it is offered from the official host as if published, whatever relcast can read of it.
    if (catalog && underOwnNames(name, catalog.pluginId)) {
      problems.push(`${name} has a name that is not UTF-8 (shown with its bytes as \\xNN) under the plugin's own public names: a static host serves it from the official host as if published, and no release names it; delete it`);
    } else {
      warnings.push(`${name} has a name that is not UTF-8 (shown with its bytes as \\xNN): no key can name it, so no reader of the store sees it and nothing offers it; rename it to UTF-8 or delete it`);
    }
  }
  return { problems: [...problems, ...unrecorded.problems], warnings };
}

/** What relcast itself keeps directly under `releases/` (no version folder). */
const FEED_KEYS = new Set([CATALOG_KEY, APPCAST_KEY, CATALOG_INDEX_KEY]);

/**
 * `releases/<folder>/<name>`: an object of a version folder (not
 * `releases/latest/`, not the feeds at the top). The folder and the name
 * are only compared and quoted, never made into keys.
 */
function versionObjectOf(key: string): { folder: string; name: string } | undefined {
  const found = /^releases\/([^/]+)\/(.+)$/s.exec(key);
  if (!found || `${RELEASES_PREFIX}${found[1]}/` === LATEST_PREFIX) return undefined;
  return { folder: found[1]!, name: found[2]! };
}


/**
 * Objects no record explains. A version folder with objects but no record
 * and no catalog entry is an upload stopped before its record (or a record
 * deleted): with its disk image it is a release built and uploaded that no
 * feed, page or `latest` will ever show, and whose download URL works for
 * anyone who has it; a problem (exit 11), because only a person can say
 * whether to finish it or throw it away. Without a disk image (relcast
 * uploads the disk image first) nothing of a release was put out: a
 * warning. Objects beside a record that the record does not name (an
 * unknown file, a delta it does not list) are warnings too.
 */
function unrecordedObjects(
  objects: ReadonlyMap<string, string[]>, recordFolders: ReadonlySet<string>, listed: ReadonlyMap<string, Catalog["versions"][number]>, records: ReadonlyMap<string, ReleaseRecord>,
  shown: (names: readonly string[]) => string,
): { warnings: string[]; problems: string[] } {
  const problems: string[] = [];
  const warnings: string[] = [];
  for (const [folder, names] of objects) {
    const v = quotedFolder(folder);
    const record = records.get(folder) ?? listed.get(folder);
    if (!recordFolders.has(folder) && !listed.has(folder)) {
      // A publish of this version may be running now: its objects go up before its record, and verify cannot tell.
      const repair = isReleaseVersion(folder)
        ? `if no publish of ${v} is running now, re-run \`relcast publish\` of ${v} with the same build to finish it (its record and feeds are written then), or delete releases/${v}/ if that release was abandoned (\`relcast gc\` removes only temp files and incomplete uploads, not objects)`
        : `${v} is not a version relcast publishes, so no publish wrote it: delete releases/${v}/ or move it out of releases/`;
      if (names.some((n) => /\.dmg$/i.test(n))) problems.push(`releases/${v}/ holds ${names.length} object(s) (${shown(names)}) but no record, and the catalog does not list ${v}: a release uploaded but not published (a publish still running, an upload stopped before its record, or a record deleted); ${repair}`);
      else warnings.push(`releases/${v}/ holds ${names.length} object(s) (${shown(names)}) but no record or disk image, and the catalog does not list ${v}: what an upload stopped early (or still running) leaves; ${repair}`);
      continue;
    }
    if (!record) continue;
    const named = new Set(["tree.json", record.objectStore.artifactFileName, ...(record.icon ? [record.icon.fileName] : [])]);
    if (record.autoupdate) named.add(zipFileName(record.pluginId, record.version));
    for (const d of record.autoupdate?.deltas ?? []) named.add(deltaFileName(record.pluginId, record.version, d.fromVersion));
    const extra = names.filter((n) => !named.has(n));
    if (extra.length > 0) warnings.push(`releases/${v}/ holds ${extra.length} object(s) its record does not name (${shown(extra)}): nothing offers them; delete them if nothing else uses them`);
  }
  return { problems, warnings };
}

/**
 * The rollout state is what rebuild, status and every pause or resume read:
 * one they would refuse, or one the catalog (and so the appcast's pubDate
 * and item list) does not show, is a problem named with its repair.
 */
async function rolloutMarkerProblem(store: ObjectStore, key: string, folder: string, entry: Catalog["versions"][number] | undefined): Promise<string | undefined> {
  const got = await store.get(key);
  if (!got) return undefined;
  const marker = parseStoredJson(got.body, rolloutMarkerSchema);
  const v = quotedFolder(folder);
  if (!marker) return `rollout state ${key} is not valid (rebuild and \`relcast rollout\` refuse it): fix it by hand (its pauses, oldest first; only the last open, exactly while "paused"), then run \`relcast rebuild\``;
  if (!entry) return undefined;
  if (!entry.autoupdate?.phasedRolloutInterval) return `rollout state ${key} belongs to ${v}, which has no phased rollout: remove it, then run \`relcast rebuild\``;
  if (!isDeepStrictEqual(entry.rollout, marker)) {
    return `rollout state ${key} (${marker.paused ? "paused" : "running"}, ${marker.pauses.length} pause(s)) disagrees with the catalog (${entry.rollout ? `${entry.rollout.paused ? "paused" : "running"}, ${entry.rollout.pauses.length} pause(s)` : "never paused"}): `
      + `run \`relcast rollout ${marker.paused ? "pause" : "resume"} ${v}\` to finish an interrupted change, or \`relcast rebuild\` to take the marker's state`;
  }
  return undefined;
}
