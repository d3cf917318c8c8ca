import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: "forks",
    // After each test file: no secret in any captured output, log or store.
    setupFiles: ["test/setup/secrets-scan.ts"],
  },
});
