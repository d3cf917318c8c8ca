import { mkdtempSync, rmSync } from "node:fs";
import { rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, expect } from "vitest";

// Every test file gets its own temp folder: os.tmpdir() in the file and in
// every process it starts (they inherit TMPDIR) points into it, and it is
// removed after the file, so a run leaves nothing in the OS temp folder, not
// even the work folders of publishes a test killed with SIGKILL. Runs after
// the file's own afterAll hooks (servers are stopped by then). The folder is
// made inside the run's folder (test/setup/run-temp-root.ts), which vitest's
// main process removes at the end whatever happened to this worker; its name
// carries the test file's, so a folder left behind says whose it was.
const root = process.env.RELCAST_TEST_TMP_ROOT ?? os.tmpdir();
process.env.RELCAST_TEST_TMP_ROOT = root;
const testFile = path.basename(expect.getState().testPath ?? "unknown", ".test.ts").replace(/[^A-Za-z0-9-]/g, "_");
// Short: Chromium puts its SingletonSocket under TMPDIR, and a Unix socket path may be at most 107 bytes (a longer
// folder name made every Chromium launch fail: "browser has been closed").
const dir = mkdtempSync(path.join(root, `f-${testFile.slice(0, 16)}-`));
process.env.TMPDIR = dir;
// Node 22.1+ keeps compiled code of the CLI and its modules here for every child `node` the file starts
// (dozens of publishes start the same AWS SDK); removed with the folder. Older Node ignores it.
process.env.NODE_COMPILE_CACHE = path.join(dir, "node-compile-cache");

// A file whose every test is skipped (a missing server) runs no afterAll: the folder then goes when the worker exits.
process.once("exit", () => rmSync(dir, { recursive: true, force: true }));

afterAll(async () => {
  process.env.TMPDIR = root;
  await rm(dir, { recursive: true, force: true, maxRetries: 3 });
});
