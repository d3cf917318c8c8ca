import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";

/**
 * Global setup: one temp folder for the whole run, `relcast-test-run-*` in the
 * OS temp folder; every test file's own folder (test/setup/temp-dir.ts) is made
 * inside it. A file's folder is removed by its afterAll, but a worker that
 * never gets there leaves it behind: vitest stops a worker with SIGTERM (then
 * SIGKILL), which runs no `exit` handler, so a file whose worker crashed, timed
 * out or failed to load, or a process it started that wrote into its folder
 * after the removal, left a `relcast-test-file-*` folder in the OS temp folder.
 * The teardown runs in vitest's main process after every worker has stopped:
 * it names the files whose folder was still there, then removes the run's folder.
 */
const PREFIX = "relcast-test-run-";

export default function setup(): () => void {
  const root = mkdtempSync(path.join(os.tmpdir(), PREFIX));
  // Workers are started after the global setup and inherit the main process's environment.
  process.env.RELCAST_TEST_TMP_ROOT = root;
  return () => {
    const left = readdirSync(root);
    if (left.length > 0) {
      process.stderr.write(`temp folders left by test files (removed now): ${left.join(", ")}\n`);
    }
    rmSync(root, { recursive: true, force: true, maxRetries: 3 });
  };
}
