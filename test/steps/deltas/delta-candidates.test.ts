import { describe, expect, it } from "vitest";
import { CatalogEntries, type CatalogEntry } from "../../../src/catalog/catalog-entry.js";
import { deltaCandidates } from "../../../src/steps/deltas/delta-candidates.js";
import { compareSparkleVersions } from "../../../src/sparkle/version-comparator.js";

/** The rule spelled out as filters over every entry: what the one-pass selection must equal. */
function byFilters(entries: CatalogEntry[], target: { version: string; build: number; channel: string }, maximum: number): CatalogEntry[] {
  return entries
    .filter((e) => e.version !== target.version && !e.yanked && e.build !== undefined)
    .filter((e) => e.channel === target.channel || e.channel === "stable")
    .filter((e) => compareSparkleVersions(e.build!, String(target.build)) < 0)
    .sort((a, b) => compareSparkleVersions(b.build!, a.build!))
    .slice(0, maximum);
}

function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => ((s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 4294967296);
}

describe("delta candidates", () => {
  it("picks the highest older builds of the channel and stable, as the rule's filters do, in one pass over the entries", () => {
    const next = rng(7);
    for (let round = 0; round < 500; round++) {
      const n = Math.floor(next() * 60);
      const entries: CatalogEntry[] = Array.from({ length: n }, (_, k) => ({
        version: `1.${k}.0`, channel: next() < 0.3 ? "beta" : next() < 0.1 ? "nightly" : "stable",
        // Equal builds too (they keep catalog order), and some releases without an update archive.
        build: next() < 0.1 ? undefined : next() < 0.2 ? `${Math.floor(next() * 5)}` : `${Math.floor(next() * 100)}`,
        publishedAt: { _seconds: 1_700_000_000 - k, _nanoseconds: 0 }, yanked: next() < 0.1,
      }));
      const target = { version: n > 0 && next() < 0.2 ? `1.${Math.floor(next() * n)}.0` : "9.0.0", build: Math.floor(next() * 110), channel: next() < 0.5 ? "beta" : "stable" };
      const maximum = Math.floor(next() * 7);
      const expected = byFilters(entries, target, maximum);
      expect(deltaCandidates(entries, target, maximum), `round ${round}`).toEqual(expected);
      expect(deltaCandidates(CatalogEntries.of(entries), target, maximum), `round ${round}`).toEqual(expected);
    }
  });
});
