import { fromTimestamp } from "../domain/timestamps.js";
import { entryText } from "../domain/catalog.js";
import type { Catalog, ReleaseRecord } from "../domain/record-schema.js";
import { isYanked, withYankState } from "../domain/yank-state.js";
import { isPaused, withRolloutState } from "../domain/rollout-state.js";

/** The one feeds change that leads from a previous catalog to the current one. */
export type FeedStep =
  | { kind: "add"; record: ReleaseRecord }
  | { kind: "yank-state"; before: ReleaseRecord; after: ReleaseRecord }
  | { kind: "rollout-state"; before: ReleaseRecord; after: ReleaseRecord };

/** The step in words, for a warning: what the public copies do not show yet. */
export function describeStep(step: FeedStep): string {
  if (step.kind === "add") return `they do not list ${step.record.version} yet`;
  if (step.kind === "rollout-state") {
    return isPaused(step.after)
      ? `they still offer ${step.after.version}, whose rollout was paused at ${step.after.rollout!.pauses.at(-1)!.pausedAt}`
      : `they still show the rollout of ${step.after.version} before its resume`;
  }
  return isYanked(step.after)
    ? `they still offer ${step.after.version}, which is yanked (${step.after.yankedAt ?? "unknown time"}${step.after.yankedReason ? `: ${step.after.yankedReason}` : ""})`
    : `they still show ${step.after.version} as yanked, which was unyanked`;
}

const sameEntry = (a: ReleaseRecord, b: ReleaseRecord) => entryText(a) === entryText(b);
const sameButYank = (a: ReleaseRecord, b: ReleaseRecord) => entryText(withYankState(a, undefined)) === entryText(withYankState(b, undefined));
const sameButRollout = (a: ReleaseRecord, b: ReleaseRecord) => entryText(withRolloutState(a, undefined)) === entryText(withRolloutState(b, undefined));

/** When a release's rollout state last changed (its last pause or resume); undefined: never paused. */
function rolloutChangedAt(r: ReleaseRecord): number | undefined {
  const last = r.rollout?.pauses.at(-1);
  return last ? Date.parse(last.resumedAt ?? last.pausedAt) : undefined;
}

/**
 * Whether `previous` is exactly what the catalog was one feeds change before
 * `current`: a publish that added one release (every other entry the same,
 * byte for byte as the catalog writes it, in the same order), or a yank or
 * unyank of one release (the same entries but that one's yank state). This is
 * the only state a publish, yank or unyank killed between its feeds and site
 * steps leaves in the public copies; anything else is not a stale copy but
 * a different catalog. Answers the step, or why there is none.
 */
export function previousStep(current: Catalog, previous: Catalog): FeedStep | { problem: string } {
  if (previous.pluginId !== current.pluginId) return { problem: `it is for plugin ${previous.pluginId}, not ${current.pluginId}` };
  if (previous.count !== previous.versions.length) return { problem: `it says count ${previous.count} but lists ${previous.versions.length} releases` };
  const cur = current.versions;
  const prev = previous.versions;
  if (prev.length === cur.length - 1) {
    let skipped: ReleaseRecord | undefined;
    for (let i = 0, j = 0; i < cur.length; i++) {
      const p = prev[j];
      if (p && sameEntry(p, cur[i]!)) {
        j++;
        continue;
      }
      if (skipped) return { problem: differenceAt(cur[i]!, p) };
      skipped = cur[i]!;
    }
    const later = newerThan(cur, timeOfPublish(skipped!), skipped!);
    if (later) return { problem: `it does not list ${skipped!.version}, but ${later} came after it: the state one change back lists every release but the last one published` };
    return { kind: "add", record: skipped! };
  }
  if (prev.length !== cur.length) return { problem: `it lists ${prev.length} releases; the catalog lists ${cur.length} (one publish adds one)` };
  let step: FeedStep | undefined;
  for (const [i, c] of cur.entries()) {
    const p = prev[i]!;
    if (sameEntry(p, c)) continue;
    if (!step && p.version === c.version && sameButYank(p, c) && isYanked(p) !== isYanked(c)) step = { kind: "yank-state", before: p, after: c };
    else if (!step && p.version === c.version && sameButRollout(p, c)) step = { kind: "rollout-state", before: p, after: c };
    else return { problem: differenceAt(c, p) };
  }
  // A yank is the last change only if nothing was published or yanked after it (its marker's time). An unyank leaves
  // no time behind, so it is taken as it is.
  if (step?.kind === "yank-state" && isYanked(step.after) && step.after.yankedAt !== undefined) {
    const later = newerThan(cur, Date.parse(step.after.yankedAt), step.after);
    if (later) return { problem: `it still offers ${step.after.version}, yanked at ${step.after.yankedAt}, but ${later} came after that yank: the state one change back has every later change` };
  }
  // A pause or resume likewise, by the time it recorded.
  const changedAt = step?.kind === "rollout-state" ? rolloutChangedAt(step.after) : undefined;
  if (step?.kind === "rollout-state" && changedAt !== undefined) {
    const later = newerThan(cur, changedAt, step.after);
    if (later) return { problem: `it shows the rollout of ${step.after.version} before its last pause or resume, but ${later} came after that: the state one change back has every later change` };
  }
  return step ?? { problem: "it holds the same releases in another layout" };
}

function timeOfPublish(record: ReleaseRecord): number {
  return fromTimestamp(record.publishedAt).getTime();
}

/** A change to the catalog after `time` (a publish, or a yank by its marker's time), other than `except`'s own, as words; undefined when none. */
function newerThan(records: readonly ReleaseRecord[], time: number, except: ReleaseRecord): string | undefined {
  for (const r of records) {
    if (r === except) continue;
    if (timeOfPublish(r) > time) return `the publish of ${r.version}`;
    if (isYanked(r) && r.yankedAt !== undefined && Date.parse(r.yankedAt) > time) return `the yank of ${r.version}`;
    if ((rolloutChangedAt(r) ?? -Infinity) > time) return `the last pause or resume of ${r.version}`;
  }
  return undefined;
}

/** Names the first field where an entry differs from the catalog's (or the entry in its place). */
function differenceAt(want: ReleaseRecord, got: ReleaseRecord | undefined): string {
  if (!got) return `it does not list ${want.version}`;
  if (got.version !== want.version) return `it lists ${got.version} where the catalog lists ${want.version}`;
  const field = firstDifference(withYankState(want, undefined), withYankState(got, undefined), "");
  return field !== undefined ? `its entry of ${want.version} differs from the catalog's in ${field}` : `its entry of ${want.version} differs from the catalog's in its yank state`;
}

function firstDifference(a: unknown, b: unknown, at: string): string | undefined {
  if (a && b && typeof a === "object" && typeof b === "object") {
    const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])];
    for (const k of keys) {
      const found = firstDifference((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k], at ? `${at}.${k}` : k);
      if (found !== undefined) return found;
    }
    return JSON.stringify(a) === JSON.stringify(b) ? undefined : at || "(its key order)";
  }
  return JSON.stringify(a) === JSON.stringify(b) ? undefined : at || "(the whole entry)";
}
