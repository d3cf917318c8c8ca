import { describe, expect, it } from "vitest";
import type { Catalog, ReleaseRecord } from "../../src/domain/record-schema.js";
import { previousStep } from "../../src/verify/previous-state.js";

/** Entries with what previousStep reads: version, publication time, yank state (newest first, as the catalog lists them). */
function entry(version: string, publishedSeconds: number, yankedAt?: string): ReleaseRecord {
  return { version, publishedAt: { _seconds: publishedSeconds, _nanoseconds: 0 }, ...(yankedAt ? { yanked: true, yankedAt } : {}) } as unknown as ReleaseRecord;
}
const catalog = (...versions: ReleaseRecord[]): Catalog => ({ pluginId: "p", count: versions.length, versions }) as unknown as Catalog;
const T = Date.parse("2026-11-01T00:00:00Z") / 1000;

/**
 * The public feeds may be one change behind the canonical ones (a run
 * stopped between its feeds and site steps), but only behind the LAST
 * change: a public catalog that leaves out an older release, or flips an
 * older yank, never existed.
 */
describe("the state one change back", () => {
  it("accepts the catalog without the release published last", () => {
    const now = catalog(entry("1.2.0", T + 200), entry("1.1.0", T + 100), entry("1.0.0", T));
    expect(previousStep(now, catalog(entry("1.1.0", T + 100), entry("1.0.0", T)))).toMatchObject({ kind: "add" });
  });

  it("refuses one without a release published before another", () => {
    const now = catalog(entry("1.2.0", T + 200), entry("1.1.0", T + 100), entry("1.0.0", T));
    expect(previousStep(now, catalog(entry("1.2.0", T + 200), entry("1.0.0", T)))).toMatchObject({ problem: expect.stringMatching(/does not list 1\.1\.0, but the publish of 1\.2\.0 came after it/) });
  });

  it("accepts a yank that was the last change, and refuses one with a publish after it", () => {
    const yankedLast = catalog(entry("1.1.0", T + 100), entry("1.0.0", T, "2026-11-01T00:05:00.000Z"));
    expect(previousStep(yankedLast, catalog(entry("1.1.0", T + 100), entry("1.0.0", T)))).toMatchObject({ kind: "yank-state" });
    const publishedAfter = catalog(entry("1.1.0", T + 600), entry("1.0.0", T, "2026-11-01T00:05:00.000Z"));
    expect(previousStep(publishedAfter, catalog(entry("1.1.0", T + 600), entry("1.0.0", T)))).toMatchObject({ problem: expect.stringMatching(/still offers 1\.0\.0, yanked at .*, but the publish of 1\.1\.0 came after that yank/) });
  });

  it("accepts a pause or resume that was the last change, and refuses one with a publish after it", () => {
    const paused = (e: ReleaseRecord, pausedAt: string, resumedAt?: string) => ({ ...e, rollout: { paused: resumedAt === undefined, pauses: [{ pausedAt, ...(resumedAt ? { resumedAt } : {}) }] } }) as ReleaseRecord;
    const pausedLast = catalog(entry("1.1.0", T + 100), paused(entry("1.0.0", T), "2026-11-01T00:05:00.000Z"));
    expect(previousStep(pausedLast, catalog(entry("1.1.0", T + 100), entry("1.0.0", T)))).toMatchObject({ kind: "rollout-state" });
    const resumedLast = catalog(entry("1.1.0", T + 100), paused(entry("1.0.0", T), "2026-11-01T00:05:00.000Z", "2026-11-01T00:09:00.000Z"));
    expect(previousStep(resumedLast, pausedLast)).toMatchObject({ kind: "rollout-state" });
    const publishedAfter = catalog(entry("1.1.0", T + 600), paused(entry("1.0.0", T), "2026-11-01T00:05:00.000Z"));
    expect(previousStep(publishedAfter, catalog(entry("1.1.0", T + 600), entry("1.0.0", T)))).toMatchObject({ problem: expect.stringMatching(/rollout of 1\.0\.0 before its last pause or resume, but the publish of 1\.1\.0 came after that/) });
  });
});
