import { RelcastError } from "../core/errors.js";
import { describeZodIssues } from "../core/zod-message.js";
import { rolloutMarkerSchema, type ReleaseRecord, type RolloutMarker } from "./record-schema.js";
import { rolloutBoundIssues } from "./rollout-bounds.js";
import { fromTimestamp } from "./timestamps.js";

/**
 * Phased-rollout state. Sparkle (SUAppcastDriver.m) puts each installed copy
 * in one of 7 groups (a random number it keeps, modulo 7) and, on a
 * background check, offers an item with `sparkle:phasedRolloutInterval` to
 * group g only once `now - pubDate >= g * interval`; critical updates and
 * checks the user starts ignore the groups. So the pubDate is the rollout's
 * clock: a pause takes the item out of the feed, and a resume moves the
 * pubDate on by the time spent paused, so every group's turn comes exactly
 * that much later and none is skipped or started again.
 */

/** Sparkle's NUM_UPDATE_GROUPS (SUPhasedUpdateGroupInfo.m). */
export const PHASED_UPDATE_GROUPS = 7;

/** A paused release is never offered (not in the appcast, not `latest`) until it is resumed. */
export function isPaused(record: Pick<ReleaseRecord, "rollout">): boolean {
  return record.rollout?.paused === true;
}

/** Whole seconds spent paused over every closed pause (and the open one up to `now`, when given). */
export function pausedSeconds(marker: RolloutMarker | undefined, now?: Date): number {
  let total = 0;
  for (const p of marker?.pauses ?? []) {
    const end = p.resumedAt !== undefined ? Date.parse(p.resumedAt) : now?.getTime();
    if (end !== undefined) total += Math.max(0, Math.floor((end - Date.parse(p.pausedAt)) / 1000));
  }
  return total;
}

/** The original pubDate: the publication time in whole seconds (what the appcast showed before any pause). */
export function originalPubDate(record: Pick<ReleaseRecord, "publishedAt">): Date {
  return new Date(Math.floor(fromTimestamp(record.publishedAt).getTime() / 1000) * 1000);
}

/** The item's pubDate: the original one plus every closed pause (and, with `now`, the open one so far). */
export function rolloutPubDate(record: Pick<ReleaseRecord, "publishedAt" | "rollout">, now?: Date): Date {
  return new Date(originalPubDate(record).getTime() + pausedSeconds(record.rollout, now) * 1000);
}

/** When each group's turn comes (group i: pubDate + i × interval), group 0 first. */
export function groupTurns(pubDate: Date, intervalSeconds: number): Date[] {
  return Array.from({ length: PHASED_UPDATE_GROUPS }, (_, i) => new Date(pubDate.getTime() + i * intervalSeconds * 1000));
}

/** The marker after a pause at `at` (whole seconds). */
export function pausedMarker(current: RolloutMarker | undefined, at: Date): RolloutMarker {
  return { paused: true, pauses: [...(current?.pauses ?? []), { pausedAt: at.toISOString() }] };
}

/** The marker after a resume at `at`: the open pause is closed. */
export function resumedMarker(current: RolloutMarker, at: Date): RolloutMarker {
  const pauses = current.pauses.map((p, i) => (i === current.pauses.length - 1 ? { pausedAt: p.pausedAt, resumedAt: at.toISOString() } : p));
  return { paused: false, pauses };
}

/** The marker's bytes; a marker relcast could not read back is refused before it is written. */
export function serializeRolloutMarker(marker: RolloutMarker): string {
  const readable = rolloutMarkerSchema.safeParse(marker);
  if (!readable.success) throw new RelcastError("E_INPUT", `the rollout state would not pass relcast's own reading:\n${describeZodIssues(readable.error, "rollout.json")}`, "check the time given (--at) and try again; nothing was written");
  return JSON.stringify(marker, null, 2) + "\n";
}

/** The catalog entry with the rollout state applied (or removed, without a marker). */
export function withRolloutState(record: ReleaseRecord, marker: RolloutMarker | undefined): ReleaseRecord {
  const issues = marker ? rolloutBoundIssues(originalPubDate(record).getTime(), marker) : [];
  if (issues.length > 0) {
    throw new RelcastError(
      "E_CATALOG", `the rollout state of ${record.version} (releases/${record.version}/rollout.json) does not fit the release: ${issues.map((i) => `pause ${i.index + 1}: ${i.message}`).join("; ")}`,
      `fix or remove that file by hand (it lists the pauses of ${record.version}'s phased rollout), then run \`relcast rebuild\`; nothing was written`,
    );
  }
  const { rollout: _r, ...rest } = record;
  return marker ? { ...rest, rollout: marker } : rest;
}
