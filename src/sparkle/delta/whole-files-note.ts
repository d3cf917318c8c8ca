/**
 * What a delta ships whole and why, one line per reason, for the publish log
 * and `relcast delta create`: a release engineer who sees a 5 GiB delta wants
 * to know which files made it so, and what setting would change it.
 */
import type { DeltaSummary } from "./delta-create.js";

/** Files named in one line at most; the rest are counted. */
const MAX_NAMED = 10;

function list<T>(items: readonly T[], show: (item: T) => string): string {
  const named = items.slice(0, MAX_NAMED).map(show).join(", ");
  return items.length > MAX_NAMED ? `${named} and ${items.length - MAX_NAMED} more` : named;
}

const mib = (bytes: number): string => `${Math.round((bytes / 1048576) * 10) / 10} MiB`;

export function wholeFilesNotes(summary: Pick<DeltaSummary, "overLimit" | "stored" | "diffLimitBytes">): string[] {
  const lines: string[] = [];
  if (summary.overLimit.length > 0) {
    lines.push(
      `${summary.overLimit.length} changed file(s) shipped whole, not diffed, because the old or new file is over the ${mib(summary.diffLimitBytes)} diff limit (deltas.diffLimitMiB, --diff-limit-mib; at most 1024): ` +
        list(summary.overLimit, (f) => `${f.rel.slice(1)} (${f.oldSize} → ${f.size} bytes)`),
    );
  }
  if (summary.stored.length > 0) {
    lines.push(
      `${summary.stored.length} whole file(s) stored uncompressed in part or in full, their sampled blocks being incompressible (compressing them would take minutes and save nothing): ` +
        list(summary.stored, (f) => `${f.rel.slice(1)} (${f.storedBytes} of ${f.size} bytes)`),
    );
  }
  return lines;
}
