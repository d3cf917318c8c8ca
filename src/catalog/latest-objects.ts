import semver from "semver";
import { LATEST_PREFIX, yankKey } from "../domain/release-layout.js";
import type { ObjectStore } from "../store/object-store.js";

/** Parses `releases/latest/<id>-<version>.(dmg|zip)` back into a version. */
export function versionOfLatestKey(key: string, pluginId: string): string | undefined {
  const name = key.slice(LATEST_PREFIX.length);
  const prefix = `${pluginId}-`;
  if (!name.startsWith(prefix)) return undefined;
  const m = /^(.*)\.(dmg|zip)$/.exec(name.slice(prefix.length));
  return m && semver.valid(m[1]!) === m[1] ? m[1] : undefined;
}

export async function latestObjects(store: ObjectStore, pluginId: string): Promise<Array<{ key: string; version: string }>> {
  const found: Array<{ key: string; version: string }> = [];
  for await (const meta of store.list(LATEST_PREFIX)) {
    const version = versionOfLatestKey(meta.key, pluginId);
    if (version) found.push({ key: meta.key, version });
  }
  return found;
}

/** Of the versions given, those with a yank marker (a yank may be moving latest away from them right now). */
export async function yankedAmong(store: ObjectStore, versions: readonly string[]): Promise<Set<string>> {
  const marked = await Promise.all(versions.map(async (v) => ((await store.head(yankKey(v))) ? v : undefined)));
  return new Set(marked.filter((v): v is string => v !== undefined));
}
