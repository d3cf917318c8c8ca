import type { ReleaseRecord, RolloutMarker } from "./record-schema.js";
import { groupTurns, originalPubDate, pausedSeconds, rolloutPubDate } from "./rollout-state.js";
import { rfc822 } from "./timestamps.js";
import { isYanked } from "./yank-state.js";

export interface GroupTurn {
  group: number;
  /** When Sparkle offers the update to this group (on a background check); while paused: if resumed at `now`. */
  turn: string;
  /** The group's turn had come (before the pause, while paused). */
  reached: boolean;
}

export interface RolloutStatus {
  version: string;
  channel: string;
  intervalSeconds: number;
  state: "running" | "paused" | "complete" | "yanked";
  originalPubDate: string;
  /** The appcast's pubDate; null while paused (the item is not in the appcast). */
  pubDate: string | null;
  pausedSeconds: number;
  pauses: RolloutMarker["pauses"];
  groups: GroupTurn[];
}

/**
 * Where a phased rollout stands at `now`. Running: each group's turn is the
 * appcast's pubDate + i × interval. Paused: the turns it would have if it
 * were resumed at `now` (the open pause counted so far), and the groups
 * reached before the pause.
 */
export function rolloutStatus(record: ReleaseRecord, intervalSeconds: number, marker: RolloutMarker | undefined, now: Date): RolloutStatus {
  const paused = marker?.paused === true;
  const state = { ...record, rollout: marker };
  const clock = rolloutPubDate(state, paused ? now : undefined);
  const groups = groupTurns(clock, intervalSeconds).map((t, group) => ({ group, turn: t.toISOString(), reached: t.getTime() <= now.getTime() }));
  return {
    version: record.version, channel: record.channel, intervalSeconds,
    state: isYanked(record) ? "yanked" : paused ? "paused" : groups.every((g) => g.reached) ? "complete" : "running",
    originalPubDate: rfc822(originalPubDate(record)),
    pubDate: paused ? null : rfc822(clock),
    pausedSeconds: pausedSeconds(marker, paused ? now : undefined),
    pauses: marker?.pauses ?? [],
    groups,
  };
}

/** "2d 3h 0m 5s" for a number of seconds. */
export function spanText(seconds: number): string {
  const d = Math.floor(seconds / 86400), h = Math.floor((seconds % 86400) / 3600), m = Math.floor((seconds % 3600) / 60), s = seconds % 60;
  return [d ? `${d}d` : "", d || h ? `${h}h` : "", d || h || m ? `${m}m` : "", `${s}s`].filter(Boolean).join(" ");
}

/** The human lines of one status. */
export function formatRolloutStatus(s: RolloutStatus): string[] {
  const lines = [`${s.version} (${s.channel}): ${s.state}, interval ${s.intervalSeconds} s (${spanText(s.intervalSeconds)}), 7 groups`];
  lines.push(`  original pubDate: ${s.originalPubDate}`);
  if (s.pauses.length > 0) {
    for (const p of s.pauses) lines.push(`  paused ${p.pausedAt} → ${p.resumedAt ?? "(still paused)"}`);
    lines.push(`  paused in all: ${spanText(s.pausedSeconds)}${s.state === "paused" ? " so far" : ""}`);
  }
  lines.push(s.pubDate ? `  appcast pubDate: ${s.pubDate}` : "  not in the appcast while paused; the turns below are those a resume now gives");
  for (const g of s.groups) lines.push(`  group ${g.group}: ${g.turn}  ${g.reached ? (s.state === "paused" ? "reached before the pause" : "offered") : "waits"}`);
  return lines;
}
