import { BaseSequencer, type TestSpecification } from "vitest/node";
import { defineConfig } from "vitest/config";

/**
 * The longest files, longest first (measured: each file's summed test time in a `bash .ci/run` on a clean clone on
 * the 2-core machine, 2026-11-28 02:49, quiet; files whose tests run concurrently count overlapping time).
 * A fresh clone has no duration cache, so without this list vitest could start
 * a five-minute file last and leave two workers idle at the end.
 * Files not listed follow in vitest's own order.
 */
const LONGEST_FIRST = [
  "test/verify/verify-public.test.ts",
  "test/release/delta-publish.test.ts",
  "test/store/s3-complete-faults.test.ts",
  "test/store/s3-multipart-copy.test.ts",
  "test/release/s3-conditional-writes.test.ts",
  "test/release/s3-faults-random.test.ts",
  "test/release/s3-publish.test.ts",
  "test/release/kill-points-s3.test.ts",
  "test/release/rollout.test.ts",
  "test/release/publish-errors.test.ts",
  "test/release/s3-faults-targeted.test.ts",
  "test/release/item-elements.test.ts",
  "test/release/signed-feed.test.ts",
  "test/release/latest-stable.test.ts",
  "test/verify/verify-folder.test.ts",
  "test/release/random-kills-s3.test.ts",
  "test/verify/record-inventory.test.ts",
  "test/site/yank.test.ts",
  "test/release/s3-early-upload.test.ts",
  "test/package/pack-install.test.ts",
  "test/verify/verify-s3.test.ts",
  "test/site/copy-repair.test.ts",
  "test/site/site-build.test.ts",
  "test/release/kill-points-folder.test.ts",
  "test/site/config-change-sync.test.ts",
  "test/steps/zip/zip64.test.ts",
  "test/site/downloads-page.test.ts",
  "test/release/concurrent-publish.test.ts",
  "test/release/first-release.test.ts",
  "test/gateway/abuse.test.ts",
  "test/site/serve.test.ts",
  "test/verify/hostile-store.test.ts",
  "test/site/product-site-verify.test.ts",
  "test/store/s3-store.test.ts",
];

class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const rank = (f: TestSpecification) => {
      const i = LONGEST_FIRST.findIndex((name) => f.moduleId.endsWith(`/${name}`));
      return i < 0 ? LONGEST_FIRST.length : i;
    };
    const sorted = await super.sort(files);
    return sorted.map((f, i) => ({ f, i })).sort((a, b) => rank(a.f) - rank(b.f) || a.i - b.i).map(({ f }) => f);
  }
}

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // Hang guards, not speed checks: two suites and other work can share two cores (seen: load average 60), and a
    // publish to moto then takes ten times its quiet duration. A test that hangs still fails, later.
    testTimeout: 600_000,
    hookTimeout: 600_000,
    pool: "forks",
    // Most tests wait on child processes and servers, not the CPU: three files at once even on two cores.
    maxWorkers: 3,
    sequence: { sequencer: LongestFirst },
    // Each file: its own temp folder (TMPDIR), removed after it; then no secret in any captured output, log or store.
    setupFiles: ["test/setup/temp-dir.ts", "test/setup/secrets-scan.ts"],
    // Once, before any file: brings dist/ up to date (scripts/build.mjs --if-stale; files never rebuild it themselves),
    // and makes the run's temp folder that holds every file's own (removed at the end, whatever a worker did).
    // And, first, python3 without a version manager's shim for the whole run (python-without-shim.ts: pyenv's shim
    // cost 0.8 s of CPU per call, the interpreter 0.2 s; the suite starts Python hundreds of times).
    globalSetup: ["test/helpers/python-without-shim.ts", "test/setup/build-once.ts", "test/setup/run-temp-root.ts"],
  },
});
