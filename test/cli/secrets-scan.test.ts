import { mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { capturedOutput } from "../helpers/run-cli.js";
import { registeredSecrets, registeredStoreDirs, registerSecret, registerStoreDir, secretLeaks } from "../helpers/secrets.js";

// The suite-wide scan (test/setup/secrets-scan.ts) is only worth something if it finds a leak.
describe("secrets scan", () => {
  it("finds a registered secret in captured output and in a store file", async () => {
    const secret = "scan-self-test-secret-0123456789";
    const dir = await mkdtemp(path.join(os.tmpdir(), "relcast-scan-"));
    registerSecret(secret);
    capturedOutput.push(`relcast: error: key ${secret} rejected`);
    registerStoreDir(dir);
    await writeFile(path.join(dir, "leak.json"), `{"k":"${secret}"}`);
    try {
      const leaks = await secretLeaks();
      expect(leaks.some((l) => l.includes("captured output"))).toBe(true);
      expect(leaks.some((l) => l.includes("leak.json"))).toBe(true);
      expect(leaks.join("\n")).not.toContain(secret); // the report names the secret by its first characters only
    } finally {
      capturedOutput.pop();
      registeredSecrets.delete(secret);
      registeredStoreDirs.delete(dir);
      await rm(dir, { recursive: true, force: true });
    }
  });
});
