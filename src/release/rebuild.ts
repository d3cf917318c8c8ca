import type { RelcastConfig } from "../config/schema.js";
import { RelcastError } from "../core/errors.js";
import type { ObjectStore } from "../store/object-store.js";
import { RELEASES_PREFIX } from "../domain/release-layout.js";
import { releaseRecordSchema, type ReleaseRecord } from "../domain/record-schema.js";
import { readYankMarker } from "../catalog/yank-marker.js";
import { withYankState } from "../domain/yank-state.js";
import { applyChange } from "./apply-change.js";
import type { FeedSigning } from "../catalog/feed-signing.js";

const RECORD_KEY = /^releases\/([^/]+)\/release\.json$/;
const YANK_KEY = /^releases\/([^/]+)\/yank\.json$/;

export interface RebuildResult {
  records: ReleaseRecord[];
  skipped: Array<{ key: string; reason: string }>;
}

/** Reads every stored record (`releases/<v>/release.json`). Invalid ones are reported, never dropped silently. */
export async function readAllRecords(store: ObjectStore, pluginId: string): Promise<RebuildResult> {
  const records: ReleaseRecord[] = [];
  const skipped: RebuildResult["skipped"] = [];
  const yanked = new Set<string>();
  for await (const meta of store.list(RELEASES_PREFIX)) {
    const yank = YANK_KEY.exec(meta.key);
    if (yank) yanked.add(yank[1]!);
    if (!RECORD_KEY.test(meta.key)) continue;
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
    if (parsed.data.pluginId !== pluginId) {
      skipped.push({ key: meta.key, reason: `belongs to plugin ${parsed.data.pluginId}, not ${pluginId}` });
      continue;
    }
    records.push(parsed.data);
  }
  for (const [i, record] of records.entries()) {
    if (yanked.has(record.version)) records[i] = withYankState(record, await readYankMarker(store, record.version));
  }
  return { records, skipped };
}

/**
 * Regenerates catalog and appcast from the immutable records and the yank
 * markers, and the public site from them (as a publish does: `verify` holds
 * the public files to the canonical ones): repairs a hand-edited or lost
 * catalog and migrates stores written by older tools.
 */
export async function rebuildFeeds(store: ObjectStore, config: RelcastConfig, options: { allowSkipped: boolean; signing?: FeedSigning }): Promise<RebuildResult> {
  const result = await readAllRecords(store, config.pluginId);
  if (result.skipped.length > 0 && !options.allowSkipped) {
    throw new RelcastError(
      "E_CATALOG",
      `${result.skipped.length} stored record(s) are invalid: ${result.skipped.map((s) => `${s.key} (${s.reason})`).join(", ")}`,
      "fix or remove those records, or pass --skip-invalid to rebuild without them",
    );
  }
  await applyChange(store, config, "rebuild", { kind: "replace", records: result.records }, [], { site: true, signing: options.signing });
  return result;
}
