import { expect } from "vitest";
import { APPLY_STEPS, PLAN_STEPS } from "../../src/release/pipeline.js";
import type { ObjectStore } from "../../src/store/object-store.js";
import { feedProblems } from "./feed-consistency.js";
import { runCli } from "./run-cli.js";
import type { Workspace } from "./workspace.js";

/**
 * Every boundary between two steps, read from the pipeline itself (a new
 * step is covered without editing this list): `before:<step>` for each step
 * and `after:<last step>`. `after:<step>` of any other step is the same
 * moment as `before:<next>` (nothing runs in between), so it adds no state.
 */
export const STEPS = [...PLAN_STEPS, ...APPLY_STEPS].map((s) => s.name);
export const FAILPOINTS = [...STEPS.map((s) => `before:${s}`), `after:${STEPS.at(-1)}`];

/**
 * The boundaries from the first write on: `before:upload` (every plan step
 * done, nothing written: the store is in the same state as after a kill at
 * any earlier boundary, since plan steps only read), each apply step, and
 * the end.
 */
export const WRITE_FAILPOINTS = [...APPLY_STEPS.map((s) => `before:${s.name}`), `after:${STEPS.at(-1)}`];

/**
 * For each failpoint: a publish SIGKILLed there (RELCAST_FAILPOINT), the
 * feeds checked (they name only complete objects), the same command again
 * (it completes and the catalog lists the version).
 */
export async function killAndResume(ws: Workspace, store: ObjectStore, label: string, failpoints: readonly string[]): Promise<{ kills: number; resumed: number }> {
  let kills = 0;
  let resumed = 0;
  for (const [i, failpoint] of failpoints.entries()) {
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
