import type { ObjectStore } from "../store/object-store.js";
import { LATEST_PREFIX, RELEASES_PREFIX } from "../domain/release-layout.js";
import { quotedFolder, storedKeyOf } from "../domain/record-keys.js";
import { releaseRecordSchema, type ReleaseRecord } from "../domain/record-schema.js";
import { withYankState } from "../domain/yank-state.js";
import { withRolloutState } from "../domain/rollout-state.js";
import { readYankMarker } from "./yank-marker.js";
import { readRolloutMarker } from "./rollout-marker.js";

export interface StoredRecords {
  records: ReleaseRecord[];
  /** `misplaced`: a valid record under another version's folder. */
  skipped: Array<{ key: string; reason: string; misplaced?: true }>;
  /** Every key the listing found under `releases/<folder>/` (not `releases/latest/`): what a caller checks objects against without a request each. */
  objectKeys: Set<string>;
}

/** Reads every stored record (`releases/<v>/release.json`). Invalid ones are reported, never dropped silently. */
export async function readAllRecords(store: ObjectStore, pluginId: string): Promise<StoredRecords> {
  const records: ReleaseRecord[] = [];
  const skipped: StoredRecords["skipped"] = [];
  const yanked = new Set<string>();
  const rollouts = new Set<string>();
  const objectKeys = new Set<string>();
  for await (const meta of store.list(RELEASES_PREFIX)) {
    if (!meta.key.startsWith(LATEST_PREFIX) && meta.key.indexOf("/", RELEASES_PREFIX.length) > 0) objectKeys.add(meta.key);
    const stored = storedKeyOf(meta.key);
    if (stored?.kind === "yank") yanked.add(stored.folder);
    if (stored?.kind === "rollout") rollouts.add(stored.folder);
    if (stored?.kind !== "record") continue;
    const got = await store.get(meta.key);
    if (!got) continue;
    let raw: unknown;
    try {
      raw = JSON.parse(got.body.toString("utf8"));
    } catch (err) {
      skipped.push({ key: meta.key, reason: `not JSON: ${(err as Error).message}` });
      continue;
    }
    const parsed = releaseRecordSchema.safeParse(raw);
    if (!parsed.success) {
      skipped.push({ key: meta.key, reason: parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ") });
      continue;
    }
    if (parsed.data.version !== stored.folder) {
      // Listing it would publish its release twice (or under the wrong folder's objects): refused, never guessed.
      skipped.push({ key: meta.key, misplaced: true, reason: `it holds release ${parsed.data.version}, not ${quotedFolder(stored.folder)}: a record stored under another version's folder; move it to releases/${parsed.data.version}/release.json if that has no record, otherwise remove it` });
      continue;
    }
    if (parsed.data.pluginId !== pluginId) {
      skipped.push({ key: meta.key, reason: `belongs to plugin ${parsed.data.pluginId}, not ${pluginId}` });
      continue;
    }
    records.push(parsed.data);
  }
  for (const [i, record] of records.entries()) {
    if (yanked.has(record.version)) records[i] = withYankState(record, await readYankMarker(store, record.version));
    // The rollout state is the marker's alone (a release.json never carries one).
    records[i] = withRolloutState(records[i]!, rollouts.has(record.version) ? (await readRolloutMarker(store, record.version)).marker : undefined);
  }
  return { records, skipped, objectKeys };
}
