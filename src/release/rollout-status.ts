import { readRolloutMarker } from "../catalog/rollout-marker.js";
import { isDeepStrictEqual } from "node:util";
import { CATALOG_KEY } from "../domain/release-layout.js";
import { parseCatalog } from "../domain/catalog.js";
import { rolloutStatus, type RolloutStatus } from "../domain/rollout-status.js";
import type { ObjectStore } from "../store/object-store.js";
import { requirePhasedRollout } from "./rollout.js";
import { findEntry } from "./yank.js";

export interface RolloutStatusReport {
  releases: Array<RolloutStatus & { problem?: string }>;
}

/**
 * The status of one release's phased rollout (an error if it has none), or
 * of every release with one, newest first. The state is read from each
 * release's rollout.json; a catalog that shows another state is named (an
 * interrupted pause or resume).
 */
export async function readRolloutStatus(store: ObjectStore, version: string | undefined, now: Date): Promise<RolloutStatusReport> {
  let records;
  if (version !== undefined) {
    const entry = await findEntry(store, version);
    requirePhasedRollout(entry);
    records = [entry];
  } else {
    const got = await store.get(CATALOG_KEY);
    records = got ? parseCatalog(got.body.toString("utf8"), store.uriFor(CATALOG_KEY)).versions.filter((r) => r.autoupdate?.phasedRolloutInterval !== undefined) : [];
  }
  const releases = [];
  for (const record of records) {
    const { marker } = await readRolloutMarker(store, record.version);
    const status: RolloutStatus & { problem?: string } = rolloutStatus(record, record.autoupdate!.phasedRolloutInterval!, marker, now);
    if (!isDeepStrictEqual(record.rollout, marker)) {
      status.problem = `the catalog shows another rollout state than releases/${record.version}/rollout.json (a pause or resume was interrupted): run \`relcast rollout ${marker?.paused ? "pause" : "resume"} ${record.version}\` again, or \`relcast rebuild\``;
    }
    releases.push(status);
  }
  return { releases };
}
