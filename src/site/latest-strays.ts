import { versionOfLatestKey } from "../catalog/latest-objects.js";
import { LATEST_PREFIX } from "../domain/release-layout.js";
import type { PlannedWrite } from "../domain/release-plan.js";
import type { ObjectStore } from "../store/object-store.js";

/**
 * Objects in `releases/latest/` that are no release's copy at all: a name
 * that is not `<id>-<version>.dmg|.zip` with an exact version (say
 * `<id>-1.2.0+evil.dmg`, or another plugin's file). No rule of the latest
 * step ever reads them, so nothing else would remove them; verify names
 * each, and `site sync` removes them. (Names that parse are the catalog's
 * business: the reconcile keeps, replaces or removes those.)
 */
export async function planLatestStrays(store: ObjectStore, pluginId: string, planned: ReadonlySet<string>): Promise<PlannedWrite[]> {
  const writes: PlannedWrite[] = [];
  for await (const meta of store.list(LATEST_PREFIX)) {
    if (planned.has(meta.key) || versionOfLatestKey(meta.key, pluginId) !== undefined) continue;
    writes.push({ step: "site", op: "delete", key: meta.key, needed: true, why: "not a copy of any release (its name is no version of this plugin)" });
  }
  return writes;
}
