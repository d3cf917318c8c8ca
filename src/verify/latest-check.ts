import semver from "semver";
import { isYanked } from "../catalog/appcast-selection.js";
import type { ReleaseRecord } from "../release/record-schema.js";
import { dmgFileName, LATEST_PREFIX, versionedKey, zipFileName } from "../release/release-layout.js";
import { isPrerelease } from "../release/version-input.js";
import type { ObjectStore } from "../store/object-store.js";
import { downloadObject } from "./download-object.js";

/** The version `releases/latest/` must hold: the highest semver that is neither a prerelease nor yanked. */
export function expectedLatest(records: readonly ReleaseRecord[]): ReleaseRecord | undefined {
  const candidates = records.filter((r) => semver.valid(r.version) && !isPrerelease(r.version) && !isYanked(r));
  return candidates.sort((a, b) => semver.rcompare(a.version, b.version))[0];
}

/**
 * `releases/latest/` holds exactly the expected release's disk image and zip
 * (when it has one), byte for byte the versioned objects, and nothing older.
 */
export async function latestProblems(store: ObjectStore, pluginId: string, records: readonly ReleaseRecord[]): Promise<string[]> {
  const want = expectedLatest(records);
  const problems: string[] = [];
  const present = new Set<string>();
  for await (const meta of store.list(LATEST_PREFIX)) present.add(meta.key);
  const expectedNames = want ? [dmgFileName(pluginId, want.version), ...(want.autoupdate ? [zipFileName(pluginId, want.version)] : [])] : [];
  for (const name of expectedNames) {
    const key = `${LATEST_PREFIX}${name}`;
    if (!present.has(key)) {
      problems.push(`${key} is missing; latest must hold ${want!.version}, the highest stable version`);
      continue;
    }
    const [copy, original] = await Promise.all([downloadObject(store, key), downloadObject(store, versionedKey(want!.version, name))]);
    if (copy && original && (copy.sha256 !== original.sha256 || copy.sizeBytes !== original.sizeBytes)) {
      problems.push(`${key} differs from ${versionedKey(want!.version, name)}`);
    }
  }
  for (const key of present) {
    if (!expectedNames.some((n) => key === `${LATEST_PREFIX}${n}`)) {
      problems.push(`${key} should not be in latest/ (latest is ${want?.version ?? "empty: no stable release"})`);
    }
  }
  return problems;
}
