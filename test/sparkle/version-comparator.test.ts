import { describe, expect, it } from "vitest";
import { compareSparkleVersions, splitVersion } from "../../src/sparkle/version-comparator.js";

/** Every assertion of Sparkle's own Tests/SUVersionComparisonTest.m (Sparkle 2), as [older, newer] or [same, same]. */
const ASCENDING: Array<[string, string]> = [
  // testNumbers
  ["1.0", "1.1"], ["1.1", "2.0"], ["0.0.1", "0.1"], ["0.1", "0.1.2"],
  // testCommitSHAs
  ["1.5.5-335d3e2", "1.5.6-b252311"],
  // testPrereleases
  ["1.5.5", "1.5.6a1"], ["1.1.0b1", "1.1.0b2"], ["1.1.1b2", "1.1.2b1"], ["1.1.1b2", "1.1.2a1"], ["1.0a1", "1.0b1"],
  ["1.0b1", "1.0"], ["0.9", "1.0a1"], ["1.0b", "1.0b2"], ["1.0b10", "1.0b11"], ["1.0b9", "1.0b10"], ["1.0rc", "1.0"],
  ["1.0b", "1.0"], ["1.0pre1", "1.0"],
  // testVersionsWithBuildNumbers
  ["1.0 (1234)", "1.0 (1235)"], ["1.0b1 (1234)", "1.0 (1234)"], ["1.0b5 (1234)", "1.0b5 (1235)"], ["1.0b5 (1234)", "1.0.1b5 (1234)"],
  ["1.0.1b5 (1234)", "1.0.1b6 (1234)"], ["2.0.0.2429", "2.0.0.2430"], ["1.1.1.1818", "2.0.0.2430"], ["3.3 (5847)", "3.3.1b1 (5902)"],
  // testVersionsWithReverseDateBasedNumbers
  ["201210251627", "201211051041"],
  // plain integer build numbers, as relcast writes them
  ["9", "10"], ["99", "100"], ["1999", "2000"],
];

const EQUAL: Array<[string, string]> = [
  ["1.0", "1.0"], ["1.0", "1.0.0"],
  ["1.5.5-335d3e2", "1.5.5-a655360"], ["1.5-335d3e2", "1.5.0-335d3e2"],
  ["1.0pre1", "1.0.0pre1"],
  ["3.3 (5847)", "3.3.0 (5847)"], ["1.1.1.1818", "1.1.1.1818.0"], ["3.3b1 (5902)", "3.3.0b1 (5902)"],
  ["201210251627.0", "201210251627"],
  ["", ""], ["0100", "100"],
];

describe("Sparkle version comparator (SUStandardVersionComparator)", () => {
  it.each(ASCENDING)("%s < %s", (older, newer) => {
    expect(compareSparkleVersions(older, newer)).toBe(-1);
    expect(compareSparkleVersions(newer, older)).toBe(1);
  });

  it.each(EQUAL)("%s == %s", (a, b) => {
    expect(compareSparkleVersions(a, b)).toBe(0);
    expect(compareSparkleVersions(b, a)).toBe(0);
  });

  it("splits into digit runs, word runs and single separators, stopping at a dash", () => {
    expect(splitVersion("1.0b10")).toEqual(["1", ".", "0", "b", "10"]);
    expect(splitVersion("3.3 (5847)")).toEqual(["3", ".", "3", " ", "(", "5847", ")"]);
    expect(splitVersion("1.5.5-335d3e2")).toEqual(["1", ".", "5", ".", "5"]);
    expect(splitVersion("1..2")).toEqual(["1", ".", ".", "2"]);
  });

  it("differs from semver where Sparkle does: prerelease text, dashes, extra components", () => {
    // semver says 1.0.0-beta.1 < 1.0.0; Sparkle ignores everything after the dash.
    expect(compareSparkleVersions("1.0.0-beta.1", "1.0.0")).toBe(0);
    // Sparkle compares words by code unit: capitals sort first.
    expect(compareSparkleVersions("1.0B", "1.0a")).toBe(-1);
    // Numbers saturate at 2^63-1 like NSString.longLongValue.
    expect(compareSparkleVersions("99999999999999999999", "99999999999999999998")).toBe(0);
  });

  it("is a consistent order on relcast-style integer builds (antisymmetric and transitive on a sample)", () => {
    const sample = ["1", "2", "10", "11", "100", "101", "1000", "20260101", "1.1", "1.10", "1.9"];
    for (const a of sample) {
      for (const b of sample) {
        expect(compareSparkleVersions(a, b) + compareSparkleVersions(b, a)).toBe(0);
        for (const c of sample) {
          if (compareSparkleVersions(a, b) < 0 && compareSparkleVersions(b, c) < 0) expect(compareSparkleVersions(a, c)).toBe(-1);
        }
      }
    }
  });
});
