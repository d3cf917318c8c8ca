import { isDeepStrictEqual } from "node:util";
import type { RelcastConfig } from "../config/schema.js";
import { PreconditionFailedError, RelcastError } from "../core/errors.js";
import type { FeedSigning } from "../catalog/feed-signing.js";
import { readRolloutMarker } from "../catalog/rollout-marker.js";
import { expectedLatest } from "../domain/latest-choice.js";
import type { PlannedWrite } from "../domain/release-plan.js";
import { rolloutKey } from "../domain/release-layout.js";
import type { ReleaseRecord, RolloutMarker } from "../domain/record-schema.js";
import { CLOCK_SKEW_MS } from "../domain/rollout-bounds.js";
import { originalPubDate, pausedMarker, resumedMarker, rolloutPubDate, serializeRolloutMarker } from "../domain/rollout-state.js";
import { isYanked } from "../domain/yank-state.js";
import { rfc822 } from "../domain/timestamps.js";
import { CACHE_NO_CACHE } from "../store/content-types.js";
import type { ObjectStore } from "../store/object-store.js";
import { applyChange } from "./apply-change.js";
import { findEntry } from "./yank.js";

export interface RolloutResult {
  version: string;
  /** False: the rollout already was in the state asked for (nothing written). */
  changed: boolean;
  message: string;
  latest: string | undefined;
  actions: string[];
}

/** A lost compare-and-swap on the marker (another pause or resume ran meanwhile) is decided again from the new state. */
const ATTEMPTS = 5;

/** Only a release with a phased rollout that is offered at all can be paused. */
export function requirePhasedRollout(entry: ReleaseRecord): number {
  const interval = entry.autoupdate?.phasedRolloutInterval;
  if (!entry.autoupdate) throw new RelcastError("E_CONFLICT", `version ${entry.version} has no update archive: Sparkle never offers it, so there is no rollout to steer`, "`relcast rollout status` lists the releases with a phased rollout");
  if (interval === undefined) {
    throw new RelcastError(
      "E_CONFLICT", `version ${entry.version} has no phased rollout (it was published without --phased-rollout-interval): every installed copy was offered it at once`,
      `to stop offering it, run \`relcast yank ${entry.version}\`; publish with --phased-rollout-interval <seconds> (or appcast.phasedRolloutInterval) to roll out in stages`,
    );
  }
  return interval;
}

/** Pause and resume times are whole seconds: the appcast's pubDate has nothing smaller. */
const wholeSecond = (d: Date) => new Date(Math.floor(d.getTime() / 1000) * 1000);

interface Transition {
  verb: "pause" | "resume";
  /** The marker after the change, or a message when the rollout already is in that state. */
  next(marker: RolloutMarker | undefined, at: Date, entry: ReleaseRecord): RolloutMarker | { already: string };
}

const PAUSE: Transition = {
  verb: "pause",
  next(marker, at, entry) {
    if (marker?.paused) return { already: `the rollout of ${entry.version} is already paused (since ${marker.pauses.at(-1)!.pausedAt}); nothing changed` };
    const resumed = marker?.pauses.at(-1)?.resumedAt;
    if (resumed !== undefined && at.getTime() < Date.parse(resumed)) {
      throw new RelcastError("E_USAGE", `the pause time ${at.toISOString()} is before the rollout's last resume (${resumed})`, "pause at the current time (leave out --at)");
    }
    return pausedMarker(marker, at);
  },
};

const RESUME: Transition = {
  verb: "resume",
  next(marker, at, entry) {
    if (!marker?.paused) return { already: `the rollout of ${entry.version} is not paused; nothing changed` };
    const since = marker.pauses.at(-1)!.pausedAt;
    if (at.getTime() < Date.parse(since)) {
      throw new RelcastError(
        "E_USAGE", `the resume time ${at.toISOString()} is before the rollout's pause at ${since}: a rollout cannot resume before it was paused`,
        `resume at or after ${since}: wait until then, or pass --at ${since} to close the pause now without moving the pubDate`,
      );
    }
    return resumedMarker(marker, at);
  },
};

/**
 * A pause or resume time (--at) must fall in the release's life: not before
 * it was published (the pubDate would move by time in which nobody was
 * offered anything) and not ahead of this machine's clock by more than
 * CLOCK_SKEW_MS (a future pause would push every group's turn years out, and
 * a plain resume could not follow it). The one time allowed ahead is a resume
 * at the open pause's own time: it closes a pause an older relcast recorded
 * in the future without moving the pubDate.
 */
function checkTime(verb: Transition["verb"], at: Date, entry: ReleaseRecord, marker: RolloutMarker | undefined): void {
  const published = originalPubDate(entry);
  if (at.getTime() < published.getTime()) {
    throw new RelcastError("E_USAGE", `the ${verb} time ${at.toISOString()} is before ${entry.version} was published (${published.toISOString()})`, `${verb} at the current time (leave out --at)`);
  }
  const openSince = marker?.paused ? Date.parse(marker.pauses.at(-1)!.pausedAt) : undefined;
  if (verb === "resume" && at.getTime() === openSince) return;
  const latest = Date.now() + CLOCK_SKEW_MS;
  if (at.getTime() > latest) {
    throw new RelcastError(
      "E_USAGE", `the ${verb} time ${at.toISOString()} is in the future (more than ${CLOCK_SKEW_MS / 60_000} minutes after this machine's clock, ${new Date().toISOString()})`,
      `${verb} at the current time (leave out --at), or check this machine's clock`,
    );
  }
}

async function steer(store: ObjectStore, config: RelcastConfig, version: string, now: Date, signing: FeedSigning, transition: Transition): Promise<RolloutResult> {
  const at = wholeSecond(now);
  for (let attempt = 1; ; attempt++) {
    const entry = await findEntry(store, version);
    requirePhasedRollout(entry);
    if (transition.verb === "pause" && isYanked(entry)) {
      throw new RelcastError("E_CONFLICT", `version ${version} is yanked: it is offered to nobody, so there is no rollout to pause`, `run \`relcast unyank ${version}\` first if it should be offered again`);
    }
    const stored = await readRolloutMarker(store, version);
    checkTime(transition.verb, at, entry, stored.marker);
    const next = transition.next(stored.marker, at, entry);
    let writes: PlannedWrite[] = [];
    if ("already" in next) {
      // The marker says so; the catalog too, unless a pause or resume stopped between them: then finish its feeds.
      if (isDeepStrictEqual(entry.rollout, stored.marker)) return { version, changed: false, message: next.already, latest: undefined, actions: [] };
    } else {
      const bytes = Buffer.from(serializeRolloutMarker(next));
      writes = [{
        step: "record", op: "put", key: rolloutKey(version), source: { kind: "bytes", bytes }, sizeBytes: bytes.length, contentType: "application/json",
        cacheControl: config.cacheControl?.mutable ?? CACHE_NO_CACHE, precondition: { kind: "if-match", etag: stored.etag }, needed: true, why: `rollout ${transition.verb}d`,
      }];
    }
    try {
      const wanted = "already" in next ? stored.marker : next;
      let { feeds, actions } = await applyChange(store, config, `rollout ${transition.verb} ${version}`, { kind: "rollout-state", version, marker: wanted }, writes, { site: true, signing });
      // A pause or resume that wrote its marker after ours may have had its feeds overwritten by ours: whoever
      // finds the marker changed after its own feeds writes the feeds again from it, so the last state wins.
      for (let seen = wanted, round = 0; round < ATTEMPTS; round++) {
        const now = (await readRolloutMarker(store, version)).marker;
        if (isDeepStrictEqual(now, seen)) break;
        ({ feeds, actions } = await applyChange(store, config, `rollout state of ${version}`, { kind: "rollout-state", version, marker: now }, [], { site: true, signing }));
        seen = now;
      }
      const after = feeds.view.records.find((r) => r.version === version);
      const message = transition.verb === "pause"
        ? `paused the rollout of ${version} at ${at.toISOString()}: it is out of the appcast until \`relcast rollout resume ${version}\``
        : `resumed the rollout of ${version} at ${at.toISOString()}: its pubDate is now ${after ? rfc822(rolloutPubDate(after)) : "?"} (\`relcast rollout status ${version}\` shows each group's turn)`;
      return { version, changed: true, message, latest: expectedLatest(feeds.view.records)?.version, actions };
    } catch (err) {
      if (!(err instanceof PreconditionFailedError && err.key === rolloutKey(version)) || attempt >= ATTEMPTS) throw err;
    }
  }
}

/** Takes a phased rollout's item out of the appcast (and out of latest) and records when. */
export function pauseRollout(store: ObjectStore, config: RelcastConfig, version: string, now = new Date(), signing: FeedSigning = {}): Promise<RolloutResult> {
  return steer(store, config, version, now, signing, PAUSE);
}

/** Puts a paused rollout back, its pubDate moved on by every pause so each group's turn continues where it stood. */
export function resumeRollout(store: ObjectStore, config: RelcastConfig, version: string, now = new Date(), signing: FeedSigning = {}): Promise<RolloutResult> {
  return steer(store, config, version, now, signing, RESUME);
}
