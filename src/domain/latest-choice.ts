import semver from "semver";
import { isYanked } from "./yank-state.js";
import type { ReleaseRecord } from "./record-schema.js";
import { isPrerelease } from "./version-input.js";

/**
 * The release the `latest` objects and the stable latest downloads hold:
 * the highest semver that is neither a prerelease nor yanked (a backport
 * published later never takes it).
 */
export function expectedLatest(records: readonly ReleaseRecord[]): ReleaseRecord | undefined {
  const candidates = records.filter((r) => semver.valid(r.version) && !isPrerelease(r.version) && !isYanked(r));
  return candidates.sort((a, b) => semver.rcompare(a.version, b.version))[0];
}
