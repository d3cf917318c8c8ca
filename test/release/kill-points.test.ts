import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { APPLY_STEPS, PLAN_STEPS } from "../../src/release/pipeline.js";
import { openStore } from "../../src/store/open-store.js";
import type { ObjectStore } from "../../src/store/object-store.js";
import { feedProblems } from "../helpers/feed-consistency.js";
import { motoUnavailableReason, startMotoServer, type MotoServer } from "../helpers/moto-server.js";
import { runCli } from "../helpers/run-cli.js";
import { makeWorkspace, type Workspace } from "../helpers/workspace.js";


/**
 * Every boundary between two steps, read from the pipeline itself (a new
 * step is covered without editing this list): `before:<step>` for each step
 * and `after:<last step>`. `after:<step>` of any other step is the same
 * moment as `before:<next>` (nothing runs in between), so it adds no state.
 */
const STEPS = [...PLAN_STEPS, ...APPLY_STEPS].map((s) => s.name);
const FAILPOINTS = [...STEPS.map((s) => `before:${s}`), `after:${STEPS.at(-1)}`];

it("kill points include every apply step, downloads and site among them", () => {
  expect(STEPS).toEqual(expect.arrayContaining(["upload", "record", "downloads", "latest", "feeds", "site"]));
  expect(APPLY_STEPS.map((s) => s.name).every((name) => FAILPOINTS.includes(`before:${name}`))).toBe(true);
});

async function killAndResume(ws: Workspace, store: ObjectStore, label: string): Promise<{ kills: number; resumed: number }> {
  let kills = 0;
  let resumed = 0;
  for (const [i, failpoint] of FAILPOINTS.entries()) {
    const version = `3.${i}.0`;
    const p = await ws.plugin(version, 3000 + i);
    const killed = await runCli(ws.publishArgs(p, version, ["--quiet"]), { env: { RELCAST_FAILPOINT: failpoint } });
    expect(killed.signal, `${label} ${failpoint}: ${killed.stderr}`).toBe("SIGKILL");
    kills++;
    expect(await feedProblems(store, "bridge-plugin"), `${label} after kill at ${failpoint}`).toEqual([]);
    const again = await runCli(ws.publishArgs(p, version, ["--quiet"]));
    expect(again.code, `${label} re-run after ${failpoint}: ${again.stderr}`).toBe(0);
    resumed++;
    expect(await feedProblems(store, "bridge-plugin")).toEqual([]);
    const catalog = JSON.parse((await store.get("releases/catalog.json"))!.body.toString("utf8"));
    expect(catalog.versions.map((v: { version: string }) => v.version)).toContain(version);
  }
  return { kills, resumed };
}

describe("SIGKILL at every step boundary, then the same command again", () => {
  it("folder store: feeds never name a missing object and every re-run completes", async () => {
    const ws = await makeWorkspace();
    const store = await openStore(`file://${ws.storeDir}`, ws.dir);
    const result = await killAndResume(ws, store, "folder");
    console.log(`kill points (folder): ${result.kills} kills, ${result.resumed} re-runs completed`);
    const gc = await runCli(["gc", "--config", ws.configFile, "--older-than", "0"]);
    expect(gc.code, gc.stderr).toBe(0);
    expect(gc.stderr).toMatch(/gc: removed \d+ leftover/);
  }, 300_000);

  const reason = motoUnavailableReason();
  describe.skipIf(Boolean(reason))(`S3 store (moto)${reason ? ` — skipped: ${reason}` : ""}`, () => {
    let moto: MotoServer | undefined;
    beforeAll(async () => {
      moto = await startMotoServer();
    });
    afterAll(async () => {
      await moto?.stop();
    });

    it("feeds never name a missing object and every re-run completes", async () => {
      const bucket = `kill-${randomBytes(3).toString("hex")}`;
      const ws = await makeWorkspace({ store: `s3://${bucket}/site`, s3: { endpoint: moto!.endpoint, forcePathStyle: true, region: "us-east-1" } });
      const store = await openStore(`s3://${bucket}/site`, ws.dir, { s3: { endpoint: moto!.endpoint, forcePathStyle: true, region: "us-east-1" } });
      await fetch(`${moto!.endpoint}/${bucket}`, { method: "PUT" });
      const result = await killAndResume(ws, store, "s3");
      console.log(`kill points (s3): ${result.kills} kills, ${result.resumed} re-runs completed`);
    }, 600_000);

  });
});
