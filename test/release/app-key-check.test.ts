import { writeFile, rm } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../helpers/run-cli.js";
import { makeWorkspace, newKey, snapshotTree, type Workspace } from "../helpers/workspace.js";

/**
 * Every command that signs something in the store with --key-file (yank,
 * unyank, rollout pause/resume, rebuild) checks the key as publish does:
 * a key that is not the SUPublicEDKey of the newest bundle is refused with
 * E_KEY (exit 6) before anything is written, naming both public keys and
 * the fix; the right key works.
 */
describe("signing commands refuse a key that is not the app's", () => {
  let ws: Workspace;
  let otherKeyFile: string;
  let otherPublic: string;
  let before: Record<string, string>;

  beforeAll(async () => {
    ws = await makeWorkspace();
    for (const [version, build, more] of [["1.0.0", 100, []], ["1.1.0", 110, ["--phased-rollout-interval", "86400"]]] as const) {
      const p = await ws.plugin(version, build);
      const res = await runCli(ws.publishArgs(p, version, [...more]));
      expect(res.code, res.stderr).toBe(0);
    }
    const other = newKey();
    otherPublic = other.publicKeyBase64;
    otherKeyFile = path.join(ws.dir, "other-key.txt");
    await writeFile(otherKeyFile, other.seedBase64 + "\n", { mode: 0o600 });
    before = await snapshotTree(ws.storeDir);
  });
  afterAll(() => rm(ws.dir, { recursive: true, force: true }));

  const refused = async (args: string[]) => {
    const snapshot = await snapshotTree(ws.storeDir);
    const res = await runCli([...args, "--config", ws.configFile, "--key-file", otherKeyFile]);
    expect(res.code, res.stderr).toBe(6);
    expect(res.stderr).toContain(`public key ${otherPublic}`);
    expect(res.stderr).toMatch(new RegExp(`1\\.1\\.0 \\(the newest release whose bundle has one\\) carries SUPublicEDKey ${ws.key.publicKeyBase64.replace(/[+/]/g, "\\$&")}`));
    expect(res.stderr).toMatch(/--allow-key-change/);
    expect(await snapshotTree(ws.storeDir)).toEqual(snapshot);
  };

  it.each([
    ["yank", ["yank", "1.0.0"]],
    ["rollout pause", ["rollout", "pause", "1.1.0"]],
    ["rebuild", ["rebuild"]],
    ["rebuild --dry-run", ["rebuild", "--dry-run"]],
  ])("%s with another key: exit 6, both keys named, nothing written", async (_name, args) => {
    await refused(args);
    expect(await snapshotTree(ws.storeDir)).toEqual(before);
  });

  it("the app's key yanks and pauses; unyank and resume with another key are refused; verify accepts the store", async () => {
    for (const args of [["yank", "1.0.0"], ["rollout", "pause", "1.1.0"]]) {
      const res = await runCli([...args, "--config", ws.configFile, "--key-file", ws.keyFile]);
      expect(res.code, res.stderr).toBe(0);
    }
    await refused(["unyank", "1.0.0"]);
    await refused(["rollout", "resume", "1.1.0"]);
    const verified = await runCli(["verify", "--config", ws.configFile, "--public-key", ws.key.publicKeyBase64]);
    expect(verified.code, verified.stdout + verified.stderr).toBe(0);
  });
});
