import semver from "semver";
import type { ReleaseRecord } from "./record-schema.js";
import { compareSparkleVersions } from "../sparkle/version-comparator.js";
import { RelcastError } from "../core/errors.js";

/** The channel whose items carry no `<sparkle:channel>` and that every installed copy sees. */
export const DEFAULT_CHANNEL = "stable";

/** One release as the build-order rule sees it: its semver, its `sparkle:version` and its channel. */
export interface BuildOrderEntry {
  version: string;
  build: string;
  channel: string;
}

export interface BuildOrderViolation {
  /** The release with the lower semver. */
  lower: BuildOrderEntry;
  higher: BuildOrderEntry;
  kind: "equal-build" | "inverted";
}

/**
 * Sparkle filters the feed to the default channel plus the channels the app
 * allows, then offers the item with the highest `sparkle:version`. So two
 * releases meet in one installed copy's view when they share a channel or
 * one of them is on the default channel. (Two different non-default
 * channels meet only in apps that allow both at once; relcast does not
 * assume that.)
 */
export function seenTogether(a: BuildOrderEntry, b: BuildOrderEntry): boolean {
  return a.channel === b.channel || a.channel === DEFAULT_CHANNEL || b.channel === DEFAULT_CHANNEL;
}

/**
 * The rule for one pair: the semver order and Sparkle's order of the build
 * numbers must agree, and no two releases anywhere in the feed may share a
 * build number (Sparkle could not tell them apart). Pairs whose versions
 * are not semver are left alone.
 */
export function checkPair(a: BuildOrderEntry, b: BuildOrderEntry): BuildOrderViolation | undefined {
  return pairViolation(a, parsedSemver(a.version), b, parsedSemver(b.version));
}

function pairViolation(a: BuildOrderEntry, va: semver.SemVer | null, b: BuildOrderEntry, vb: semver.SemVer | null): BuildOrderViolation | undefined {
  if (a.version === b.version || !va || !vb) return undefined;
  const [lower, higher] = va.compare(vb) < 0 ? [a, b] : [b, a];
  const byBuild = compareSparkleVersions(lower.build, higher.build);
  if (byBuild === 0) return { lower, higher, kind: "equal-build" };
  if (byBuild > 0 && seenTogether(lower, higher)) return { lower, higher, kind: "inverted" };
  return undefined;
}

/**
 * The violations of one new release with each of `entries` ({@link checkPair}),
 * in one pass that keeps nothing of the entries but the violating ones: a
 * check against 10,000 releases parses each version once and drops it.
 */
export function violationsWith(candidate: BuildOrderEntry, entries: Iterable<BuildOrderEntry>): BuildOrderViolation[] {
  const parsed = semver.parse(candidate.version);
  const found: BuildOrderViolation[] = [];
  for (const e of entries) {
    const v = pairViolation(candidate, parsed, e, semver.parse(e.version));
    if (v) found.push(v);
  }
  return found;
}

// Parsed versions, so checking every pair of a store's releases (verify) parses each version once.
const parsedVersions = new Map<string, semver.SemVer | null>();

function parsedSemver(version: string): semver.SemVer | null {
  let parsed = parsedVersions.get(version);
  if (parsed === undefined) {
    if (parsedVersions.size > 100_000) parsedVersions.clear();
    parsed = semver.parse(version);
    parsedVersions.set(version, parsed);
  }
  return parsed;
}

/**
 * The build-order entries of stored records. Yanked releases stay in: a
 * copy that installed one still compares every offer against its build.
 * Records without an auto-update archive have no build and are left out.
 */
export function buildOrderEntries(records: readonly ReleaseRecord[]): BuildOrderEntry[] {
  return records.flatMap((r) => (r.autoupdate ? [{ version: r.version, build: String(r.autoupdate.buildNumber), channel: r.channel }] : []));
}

/** Every violating pair among the given releases. */
export function buildOrderViolations(entries: readonly BuildOrderEntry[]): BuildOrderViolation[] {
  const found: BuildOrderViolation[] = [];
  for (let i = 0; i < entries.length; i++) {
    for (let j = i + 1; j < entries.length; j++) {
      const v = checkPair(entries[i]!, entries[j]!);
      if (v) found.push(v);
    }
  }
  return found;
}

function label(e: BuildOrderEntry): string {
  return `${e.version} (build ${e.build}${e.channel === DEFAULT_CHANNEL ? "" : `, channel ${e.channel}`})`;
}

/** One sentence naming both releases and their builds, and what an installed copy would do. */
export function describeViolation(v: BuildOrderViolation): string {
  if (v.kind === "equal-build") {
    return `${label(v.lower)} and ${label(v.higher)} have the same build number; Sparkle could not tell them apart`;
  }
  return `${label(v.lower)} has a higher build than ${label(v.higher)}; Sparkle offers the highest sparkle:version, so users of ${v.higher.version} would be "updated" down to ${v.lower.version}`;
}

/**
 * Where a new release's build must lie on its channel view: above every
 * lower semver's build and below every higher one's. Used for the fix hint.
 */
export function buildWindow(candidate: BuildOrderEntry, existing: Iterable<BuildOrderEntry>): { above?: BuildOrderEntry; below?: BuildOrderEntry } {
  let above: BuildOrderEntry | undefined;
  let below: BuildOrderEntry | undefined;
  for (const e of existing) {
    if (e.version === candidate.version || !seenTogether(e, candidate) || !semver.valid(e.version) || !semver.valid(candidate.version)) continue;
    if (semver.lt(e.version, candidate.version)) {
      if (!above || compareSparkleVersions(e.build, above.build) > 0) above = e;
    } else if (!below || compareSparkleVersions(e.build, below.build) < 0) {
      below = e;
    }
  }
  return { ...(above ? { above } : {}), ...(below ? { below } : {}) };
}

/**
 * Stored records about to become one catalog and appcast (a rebuild, or the
 * catalog a first publish creates over records it found) must not rank
 * against their versions: the appcast would offer installed copies a
 * "downgrade". One refusal for both, naming the first pair and how many more.
 * `where`: what holds the records, as the sentence's subject.
 */
export function refuseStoredBuildOrder(records: readonly ReleaseRecord[], where: string): void {
  const violations = buildOrderViolations(buildOrderEntries(records));
  if (violations.length === 0) return;
  throw new RelcastError(
    "E_VERSION",
    `${where}: the build numbers of its release records rank against their versions: ${describeViolation(violations[0]!)}${violations.length > 1 ? ` (and ${violations.length - 1} more pair(s))` : ""}; a catalog and appcast made from them would offer installed copies a "downgrade"`,
    "remove the record of the release published out of order (releases/<version>/release.json; relcast verify lists every pair), run `relcast rebuild`, then publish that release again with a build number in order",
  );
}
