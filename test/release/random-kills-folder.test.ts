import { describe, expect, it } from "vitest";
import { openStore } from "../../src/store/open-store.js";
import { killAtRandom, leftoverTempFiles, randomKillsSeed } from "../helpers/random-kills.js";
import { runCli } from "../helpers/run-cli.js";
import { makeWorkspace } from "../helpers/workspace.js";

const MiB = 1 << 20;

describe("SIGKILL at random moments, then the same command again (folder store)", () => {
  it("feeds stay consistent, re-runs complete, gc leaves no temp file", async () => {
    const ws = await makeWorkspace();
    const store = await openStore(`file://${ws.storeDir}`, ws.dir);
    await killAtRandom(ws, store, { label: "folder", runs: 4, dmgBytes: 24 * MiB, seed: randomKillsSeed() });
    const gc = await runCli(["gc", "--config", ws.configFile, "--older-than", "0"]);
    expect(gc.code, gc.stderr).toBe(0);
    expect(await leftoverTempFiles(ws.storeDir)).toEqual([]);
  }, 600_000); // a hang guard, not a speed check
});
