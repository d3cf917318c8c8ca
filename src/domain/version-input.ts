import semver from "semver";
import { RelcastError } from "../core/errors.js";
import { DEFAULT_CHANNEL } from "./build-order.js";

/**
 * The version a user passes. A leading "v" (as in git tags) is stripped, so
 * `--version "$GITHUB_REF_NAME"` works; everything else must be strict
 * semver `<major>.<minor>.<patch>[-prerelease]`. Build metadata (`+...`) is
 * refused: semver ignores it for ordering, so two different releases would
 * compare equal, and `+` is unsafe in file names and URLs.
 */
export function normalizeVersion(input: string): string {
  const raw = input.trim();
  const candidate = /^v\d/.test(raw) ? raw.slice(1) : raw;
  if (candidate.includes("+")) {
    throw new RelcastError("E_VERSION", `version "${input}" carries build metadata ("+...")`, "drop the +part; the build number comes from CFBundleVersion (or --build-number)");
  }
  const valid = semver.valid(candidate);
  if (!valid || valid !== candidate) {
    throw new RelcastError(
      "E_VERSION",
      `version "${input}" is not a semantic version <major>.<minor>.<patch>`,
      "use three numbers without leading zeros, e.g. 1.2.3 or 1.3.0-beta.1",
    );
  }
  return valid;
}

export function isPrerelease(version: string): boolean {
  return (semver.prerelease(version)?.length ?? 0) > 0;
}

/**
 * A prerelease (`1.1.0-beta.1`) on the stable channel is offered to every
 * installed copy: it goes there only when the command line says
 * `--channel stable` in so many words, never by the config's default.
 */
export function requireChannelForPrerelease(version: string, channel: string, channelFlag: string | undefined): void {
  if (!isPrerelease(version) || channel !== DEFAULT_CHANNEL || channelFlag === DEFAULT_CHANNEL) return;
  throw new RelcastError(
    "E_VERSION",
    `${version} is a prerelease, and this publish would put it on the stable channel, where every installed copy is offered it`,
    "publish it with --channel beta (installs that opted in to beta are offered it), or pass --channel stable if every user should get it",
  );
}
