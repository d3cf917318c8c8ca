import semver from "semver";
import { RelcastError } from "../../core/errors.js";
import {
  buildWindow, describeViolation, violationsWith, type BuildOrderEntry, type BuildOrderViolation,
} from "../../domain/build-order.js";

/** The violation closest to the candidate in semver, so the message names its neighbour. */
function nearest(candidate: BuildOrderEntry, violations: BuildOrderViolation[]): BuildOrderViolation {
  const other = (v: BuildOrderViolation) => (v.lower === candidate ? v.higher : v.lower);
  const distance = (v: BuildOrderViolation) => other(v).version;
  const equal = violations.find((v) => v.kind === "equal-build");
  if (equal) return equal;
  return [...violations].sort((a, b) => {
    const aAbove = semver.gt(distance(a), candidate.version);
    const bAbove = semver.gt(distance(b), candidate.version);
    if (aAbove !== bAbove) return aAbove ? -1 : 1;
    return aAbove ? semver.compare(distance(a), distance(b)) : semver.rcompare(distance(a), distance(b));
  })[0]!;
}

function hint(candidate: BuildOrderEntry, existing: Iterable<BuildOrderEntry>): string {
  const { above, below } = buildWindow(candidate, existing);
  const low = above ? `above ${above.build} (${above.version})` : "";
  const high = below ? `below ${below.build} (${below.version})` : "";
  const range = [low, high].filter(Boolean).join(" and ");
  if (above && below && /^\d+$/.test(above.build) && /^\d+$/.test(below.build) && BigInt(below.build) - BigInt(above.build) < 2n) {
    return `no build number is free between ${above.build} (${above.version}) and ${below.build} (${below.version}); publish this fix as a version above ${below.version} instead`;
  }
  return `rebuild ${candidate.version} with a CFBundleVersion ${range || "that no other release uses"} (or pass --build-number when CFBundleVersion is not an integer)`;
}

/**
 * Refuses a release whose build number would not rank where its semver
 * does among the releases an installed copy sees with it, or that reuses
 * any existing build number. `entries` come from the catalog preflight
 * already read (iterated once, and once more for the hint of a refusal); a
 * re-run of the same version is not compared with itself.
 */
export function assertBuildOrder(candidate: BuildOrderEntry, entries: Iterable<BuildOrderEntry>): void {
  const violations = violationsWith(candidate, entries);
  if (violations.length === 0) return;
  throw new RelcastError("E_VERSION", `build order: ${describeViolation(nearest(candidate, violations))}`, hint(candidate, entries));
}
