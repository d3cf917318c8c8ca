import { execFileSync } from "node:child_process";
import { mkdir, readFile, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../helpers/run-cli.js";
import { makeWorkspace, type Workspace } from "../helpers/workspace.js";

/** The fixes messages give work as written (each refusal itself is in publish-errors.test.ts). */
// Two independent checks (one publishes nothing, one only reads --help): they run at the same time.
describe.concurrent("what the messages tell the user to do", () => {
  let ws: Workspace;
  beforeAll(async () => {
    ws = await makeWorkspace();
  });
  afterAll(async () => {
    await rm(ws.dir, { recursive: true, force: true });
  });

  it("the PEM hint's command, run by a shell, turns an OpenSSL Ed25519 key into the seed relcast signs with", async () => {
    // The key as `openssl genpkey -algorithm ed25519` writes it (PKCS#8 PEM), made by Python's cryptography from the workspace seed.
    const pem = execFileSync("python3", ["-c", [
      "import sys, base64",
      "from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey",
      "from cryptography.hazmat.primitives import serialization as s",
      "k = Ed25519PrivateKey.from_private_bytes(base64.b64decode(sys.argv[1]))",
      "sys.stdout.write(k.private_bytes(s.Encoding.PEM, s.PrivateFormat.PKCS8, s.NoEncryption()).decode())",
    ].join("\n"), ws.key.seedBase64], { encoding: "utf8" });
    const folder = path.join(ws.dir, "pem");
    await mkdir(folder);
    await writeFile(path.join(folder, "key.pem"), pem, { mode: 0o600 });
    const p = await ws.plugin("1.0.0", 100);
    const refused = await runCli([...ws.publishArgs(p, "1.0.0"), "--key-file", path.join(folder, "key.pem"), "--dry-run"]);
    expect(refused.code).toBe(6);
    const command = /fix: convert it once: (.*) \(key\.pem is this file\)/.exec(refused.stderr)?.[1];
    expect(command, refused.stderr).toBeDefined();
    execFileSync("bash", ["-c", command!], { cwd: folder });
    expect((await readFile(path.join(folder, "key.txt"), "utf8")).trim()).toBe(ws.key.seedBase64);
    const converted = await runCli([...ws.publishArgs(p, "1.0.0"), "--key-file", path.join(folder, "key.txt"), "--dry-run"]);
    expect(converted.code, converted.stderr).toBe(0);
  });

  it("publish --help lists --published-at with the form it takes", async () => {
    const help = await runCli(["publish", "--help"]);
    expect(help.code).toBe(0);
    // commander wraps long descriptions; read the help as one line.
    expect(help.stdout.replace(/\s+/g, " ")).toMatch(/--published-at <iso> publication time in UTC instead of now, e\.g\. 2026-01-31T12:00:00\.000Z/);
  });
});
