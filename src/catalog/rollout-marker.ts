import { RelcastError } from "../core/errors.js";
import { parseStoredJson } from "../core/stored-json.js";
import { rolloutKey } from "../domain/release-layout.js";
import { rolloutMarkerSchema, type RolloutMarker } from "../domain/record-schema.js";
import type { ObjectStore } from "../store/object-store.js";

/** `releases/<v>/rollout.json` and its ETag (the compare-and-swap of the next pause or resume). */
export interface StoredRollout {
  marker: RolloutMarker | undefined;
  etag: string | null;
}

/** Reads the rollout state; a damaged one is an error, never silently "running". */
export async function readRolloutMarker(store: ObjectStore, version: string): Promise<StoredRollout> {
  const got = await store.get(rolloutKey(version));
  if (!got) return { marker: undefined, etag: null };
  const marker = parseStoredJson(got.body, rolloutMarkerSchema);
  if (!marker) {
    throw new RelcastError(
      "E_CATALOG", `the rollout state ${store.uriFor(rolloutKey(version))} is not valid`,
      `fix or remove it by hand (it lists the pauses of ${version}'s phased rollout), then run \`relcast rebuild\``,
    );
  }
  return { marker, etag: got.meta.etag };
}

/** Of the versions given, those whose rollout is paused now (a pause may be moving latest away from them). */
export async function pausedAmong(store: ObjectStore, versions: readonly string[]): Promise<Set<string>> {
  const paused = await Promise.all(versions.map(async (v) => ((await readRolloutMarker(store, v)).marker?.paused ? v : undefined)));
  return new Set(paused.filter((v): v is string => v !== undefined));
}
