import semver from "semver";
import { isYanked } from "./yank-state.js";
import { isPaused } from "./rollout-state.js";
import type { ReleaseRecord } from "./record-schema.js";
import { isPrerelease } from "./version-input.js";
import { DEFAULT_CHANNEL } from "./build-order.js";

/** Whether a release of this version and channel may ever be `latest`: a stable-channel version that is not a prerelease. */
export function mayBeLatest(version: string, channel: string | undefined): boolean {
  return semver.valid(version) !== null && !isPrerelease(version) && (channel ?? DEFAULT_CHANNEL) === DEFAULT_CHANNEL;
}

/**
 * The release the `latest` objects, the stable latest downloads and the
 * page's "latest version" hold: the highest semver on the stable channel
 * that is neither a prerelease nor yanked nor a paused rollout (a backport published later never
 * takes it, nor does a release on another channel: installs on the stable
 * channel are never offered it, so neither are people who download).
 */
export function expectedLatest(records: readonly ReleaseRecord[]): ReleaseRecord | undefined {
  const candidates = records.filter((r) => mayBeLatest(r.version, r.channel) && !isYanked(r) && !isPaused(r));
  return candidates.sort((a, b) => semver.rcompare(a.version, b.version))[0];
}
