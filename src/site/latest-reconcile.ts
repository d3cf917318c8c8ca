import semver from "semver";
import { expectedLatest } from "../domain/latest-choice.js";
import type { ReleaseRecord } from "../domain/record-schema.js";
import { dmgFileName, LATEST_PREFIX, versionedKey, zipFileName } from "../domain/release-layout.js";
import { latestObjects } from "../catalog/latest-objects.js";
import { contentTypeFor } from "../store/content-types.js";
import type { ObjectStore } from "../store/object-store.js";

/**
 * Makes `releases/latest/` hold the catalog's expected latest release: copies
 * its files when missing or different in size, then removes versions that
 * are yanked or lower. A higher version that is not in the catalog yet
 * belongs to a publish still under way: it is left for that publish.
 */
export async function reconcileLatest(store: ObjectStore, pluginId: string, records: readonly ReleaseRecord[], cacheControl: string): Promise<string[]> {
  const done: string[] = [];
  const want = expectedLatest(records);
  if (want) {
    const names = [dmgFileName(pluginId, want.version), ...(want.autoupdate ? [zipFileName(pluginId, want.version)] : [])];
    for (const name of names) {
      const from = versionedKey(want.version, name);
      const [source, copy] = await Promise.all([store.head(from), store.head(`${LATEST_PREFIX}${name}`)]);
      if (source && (!copy || copy.size !== source.size)) {
        await store.copy(from, `${LATEST_PREFIX}${name}`, { contentType: contentTypeFor(name), cacheControl });
        done.push(`copied ${from} to ${LATEST_PREFIX}${name}`);
      }
    }
  }
  const yanked = new Set(records.filter((r) => r.yanked).map((r) => r.version));
  for (const obj of await latestObjects(store, pluginId)) {
    if (yanked.has(obj.version) || (want && semver.lt(obj.version, want.version))) {
      await store.delete(obj.key);
      done.push(`removed ${obj.key}`);
    }
  }
  return done;
}
