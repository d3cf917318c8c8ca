import { describe, expect, it } from "vitest";
import { isRelcastError } from "../../src/core/errors.js";
import type { ReleaseRecord } from "../../src/domain/record-schema.js";
import { buildOrderEntries, buildOrderViolations, buildWindow, checkPair, seenTogether } from "../../src/domain/build-order.js";
import { assertBuildOrder } from "../../src/steps/preflight/build-order-check.js";

const e = (version: string, build: string | number, channel = "stable") => ({ version, build: String(build), channel });

function rec(version: string, build: number, channel = "stable", extra: Record<string, unknown> = {}): ReleaseRecord {
  return {
    version, channel, autoupdate: { buildNumber: build, publicDownloadUrl: "", edSignature: "", sizeBytes: 1 }, ...extra,
  } as unknown as ReleaseRecord;
}

function refusal(fn: () => void): { message: string; hint: string; code: string } {
  try {
    fn();
  } catch (err) {
    if (isRelcastError(err)) return { message: err.message, hint: err.hint ?? "", code: err.code };
    throw err;
  }
  throw new Error("expected a refusal");
}

describe("build-order rule", () => {
  const stable = [rec("1.0.0", 100), rec("1.1.0", 110)];

  it("publishes a backport whose build lies between its neighbours", () => {
    expect(() => assertBuildOrder(e("1.0.1", 105), buildOrderEntries(stable))).not.toThrow();
    expect(() => assertBuildOrder(e("1.2.0", 120), buildOrderEntries(stable))).not.toThrow();
  });

  it("refuses a backport above the higher release, naming both releases and builds", () => {
    const r = refusal(() => assertBuildOrder(e("1.0.1", 115), buildOrderEntries(stable)));
    expect(r.code).toBe("E_VERSION");
    expect(r.message).toBe('build order: 1.0.1 (build 115) has a higher build than 1.1.0 (build 110); Sparkle offers the highest sparkle:version, so users of 1.1.0 would be "updated" down to 1.0.1');
    expect(r.hint).toContain("above 100 (1.0.0) and below 110 (1.1.0)");
  });

  it("refuses a build equal to any existing build, on any channel", () => {
    expect(refusal(() => assertBuildOrder(e("1.2.0", 110), buildOrderEntries(stable))).message).toMatch(/1\.1\.0 \(build 110\) and 1\.2\.0 \(build 110\) have the same build number/);
    const beta = [...stable, rec("2.0.0-beta.1", 200, "beta")];
    expect(refusal(() => assertBuildOrder(e("1.9.0", 200, "nightly"), buildOrderEntries(beta))).message).toMatch(/same build number/);
  });

  it("refuses a new release whose build is below an older release's", () => {
    const r = refusal(() => assertBuildOrder(e("1.2.0", 105), buildOrderEntries(stable)));
    expect(r.message).toMatch(/1\.1\.0 \(build 110\) has a higher build than 1\.2\.0 \(build 105\)/);
    expect(r.hint).toMatch(/above 110 \(1\.1\.0\)/);
  });

  it("names the nearest neighbour when several releases are violated", () => {
    const many = [rec("1.0.0", 100), rec("1.1.0", 110), rec("1.2.0", 120), rec("1.3.0", 130)];
    expect(refusal(() => assertBuildOrder(e("1.0.5", 125), buildOrderEntries(many))).message).toMatch(/than 1\.1\.0 \(build 110\)/);
  });

  it("says so when no integer build is left between the neighbours", () => {
    const tight = [rec("1.0.0", 100), rec("1.1.0", 101)];
    expect(refusal(() => assertBuildOrder(e("1.0.1", 102), buildOrderEntries(tight))).hint).toMatch(/no build number is free between 100 \(1\.0\.0\) and 101 \(1\.1\.0\)/);
  });

  it("compares a non-default channel with the default channel, not with other channels", () => {
    expect(seenTogether(e("1", 1, "beta"), e("2", 2, "stable"))).toBe(true);
    expect(seenTogether(e("1", 1, "beta"), e("2", 2, "nightly"))).toBe(false);
    const feed = [rec("1.0.0", 100), rec("2.0.0-beta.1", 200, "beta")];
    // A beta user also sees stable items: a beta below 1.0.0's build would never be offered.
    expect(refusal(() => assertBuildOrder(e("1.5.0-beta.1", 99, "beta"), buildOrderEntries(feed))).message).toMatch(/1\.0\.0 \(build 100\) has a higher build than 1\.5\.0-beta\.1 \(build 99, channel beta\)/);
    // A stable release above a beta's semver must outrank its build, or beta users stay on the beta.
    expect(refusal(() => assertBuildOrder(e("2.0.0", 150), buildOrderEntries(feed))).message).toMatch(/2\.0\.0-beta\.1 \(build 200, channel beta\) has a higher build than 2\.0\.0 \(build 150\)/);
    // Two non-default channels do not meet: nightly 1.5.0 may out-build beta 2.0.0-beta.1.
    expect(() => assertBuildOrder(e("1.5.0-nightly.1", 300, "nightly"), buildOrderEntries(feed))).not.toThrow();
  });

  it("keeps yanked releases in the rule: installed copies of them still compare against their build", () => {
    const yanked = [rec("1.0.0", 100), rec("1.1.0", 110, "stable", { yanked: true, yankedReason: "crash", yankedAt: "2026-01-01T00:00:00.000Z" })];
    expect(refusal(() => assertBuildOrder(e("1.0.1", 115), buildOrderEntries(yanked))).message).toMatch(/1\.1\.0 \(build 110\)/);
  });

  it("does not compare a re-run of a version with its own stored record", () => {
    expect(() => assertBuildOrder(e("1.1.0", 110), buildOrderEntries(stable))).not.toThrow();
  });

  it("checks every pair of a store with Sparkle's comparator", () => {
    const entries = [e("1.0.0", 100), e("1.0.1", 115), e("1.1.0", 110), e("1.2.0", 110)];
    const found = buildOrderViolations(entries).map((v) => `${v.lower.version}<${v.higher.version}:${v.kind}`);
    expect(found.sort()).toEqual(["1.0.1<1.1.0:inverted", "1.0.1<1.2.0:inverted", "1.1.0<1.2.0:equal-build"]);
    expect(checkPair(e("1.0.0", "9"), e("1.1.0", "10"))).toBeUndefined();
    expect(buildWindow(e("1.0.5", 0, "nightly"), [e("1.0.0", 100), e("1.1.0", 110), e("2.0.0", 90, "beta")])).toEqual({ above: e("1.0.0", 100), below: e("1.1.0", 110) });
  });
});
