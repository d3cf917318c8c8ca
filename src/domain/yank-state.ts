import { RelcastError } from "../core/errors.js";
import { describeZodIssues } from "../core/zod-message.js";
import { yankMarkerSchema, type ReleaseRecord, type YankMarker } from "./record-schema.js";

/**
 * Yank state: a yank is its own object (`releases/<v>/yank.json`, records
 * are create-once), and the catalog entry carries its fields while it lasts.
 */

/** A yanked release stays in the catalog but is never offered (the shape the yank command writes). */
export function isYanked(record: ReleaseRecord): boolean {
  return record.yanked === true;
}

/** The yank fields of a catalog entry, or none. */
export function yankFields(record: ReleaseRecord): Pick<ReleaseRecord, "yanked" | "yankedReason" | "yankedAt"> {
  if (record.yanked !== true) return {};
  return { yanked: true, ...(record.yankedAt !== undefined && { yankedAt: record.yankedAt }), ...(record.yankedReason !== undefined && { yankedReason: record.yankedReason }) };
}

/** The marker's bytes; a marker relcast could not read back is refused before it is written. */
export function serializeYankMarker(marker: YankMarker): string {
  const readable = yankMarkerSchema.safeParse(marker);
  if (!readable.success) throw new RelcastError("E_INPUT", `the yank marker would not pass relcast's own reading:\n${describeZodIssues(readable.error, "yank.json")}`, "fix the named value (e.g. --reason) and yank again; nothing was written");
  return JSON.stringify(marker, null, 2) + "\n";
}

/** The catalog entry with the marker's state applied (or removed, without a marker). */
export function withYankState(record: ReleaseRecord, marker: YankMarker | undefined): ReleaseRecord {
  const { yanked: _y, yankedReason: _r, yankedAt: _a, ...rest } = record;
  return marker ? { ...rest, ...marker } : rest;
}
