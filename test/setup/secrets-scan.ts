import { afterAll, expect } from "vitest";
import { capturedOutput } from "../helpers/run-cli.js";
import { registeredSecrets, registeredStoreDirs, secretLeaks } from "../helpers/secrets.js";

// Runs after every test file: no registered secret may appear in anything the
// CLI printed, in what the gateway logged, or in any store folder a test wrote.
afterAll(async () => {
  if (registeredSecrets.size === 0) return;
  expect(await secretLeaks()).toEqual([]);
  if (process.env.RELCAST_SECRETS_REPORT) {
    process.stderr.write(`secrets scan: ${registeredSecrets.size} secrets against ${capturedOutput.length} captured outputs and ${registeredStoreDirs.size} stores\n`);
  }
});
