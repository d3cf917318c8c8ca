import { describe, expect, it } from "vitest";
import { APPLY_STEPS } from "../../src/release/pipeline.js";
import { openStore } from "../../src/store/open-store.js";
import { FAILPOINTS, killAndResume, STEPS, WRITE_FAILPOINTS } from "../helpers/kill-points.js";
import { runCli } from "../helpers/run-cli.js";
import { makeWorkspace } from "../helpers/workspace.js";

it("kill points include every apply step, downloads and site among them", () => {
  expect(STEPS).toEqual(expect.arrayContaining(["upload", "record", "downloads", "latest", "feeds", "site"]));
  for (const points of [FAILPOINTS, WRITE_FAILPOINTS]) {
    expect(APPLY_STEPS.map((s) => s.name).every((name) => points.includes(`before:${name}`))).toBe(true);
    expect(points).toContain(`after:${APPLY_STEPS.at(-1)!.name}`);
  }
});

describe("SIGKILL at every step boundary, then the same command again (folder store)", () => {
  it("feeds never name a missing object and every re-run completes", async () => {
    const ws = await makeWorkspace();
    const store = await openStore(`file://${ws.storeDir}`, ws.dir);
    const result = await killAndResume(ws, store, "folder", FAILPOINTS);
    console.log(`kill points (folder): ${result.kills} kills, ${result.resumed} re-runs completed`);
    const gc = await runCli(["gc", "--config", ws.configFile, "--older-than", "0"]);
    expect(gc.code, gc.stderr).toBe(0);
    expect(gc.stderr).toMatch(/gc: removed \d+ leftover/);
  }, 600_000); // a hang guard, not a speed check
});
