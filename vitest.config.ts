import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: "forks",
    // Most tests wait on child processes and servers, not the CPU: three files at once even on two cores.
    maxWorkers: 3,
    // Each file: its own temp folder (TMPDIR), removed after it; then no secret in any captured output, log or store.
    setupFiles: ["test/setup/temp-dir.ts", "test/setup/secrets-scan.ts"],
    // Once, before any file: builds dist/ when src/ is newer (files never rebuild it themselves).
    globalSetup: ["test/setup/build-once.ts"],
  },
});
