import { spawn } from "node:child_process";
import { randomInt } from "node:crypto";
import { readdir } from "node:fs/promises";
import path from "node:path";
import { expect } from "vitest";
import type { ObjectStore } from "../../src/store/object-store.js";
import { feedProblems } from "./feed-consistency.js";
import { capturedOutput, CLI, REPO_ROOT, runCli } from "./run-cli.js";
import type { Workspace } from "./workspace.js";

/**
 * SIGKILL at random moments of a publish (mostly while it uploads), then the
 * same command again: what the deterministic kill points (test/release/kill-points-*)
 * cannot reach, a process killed in the middle of a step. The moments are
 * drawn from a seed that is printed with every result and failure;
 * RELCAST_RANDOM_KILLS_SEED=<seed> replays the same draw (the same fractions
 * of the publish's measured duration).
 */
export function randomKillsSeed(): number {
  const fromEnv = process.env.RELCAST_RANDOM_KILLS_SEED;
  return fromEnv !== undefined && fromEnv !== "" ? Number(fromEnv) >>> 0 : randomInt(2 ** 31);
}

function seeded(seed: number): () => number {
  let s = seed >>> 0;
  return () => ((s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 4294967296);
}

/** Runs the CLI and SIGKILLs it after `ms` (unless it finished first). */
function runAndKillAfter(args: string[], ms: number): Promise<{ killed: boolean; code: number | null }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], { cwd: REPO_ROOT, env: { ...process.env, GITHUB_ACTIONS: "" } });
    let out = "";
    child.stdout.on("data", (d: Buffer) => (out += d.toString()));
    child.stderr.on("data", (d: Buffer) => (out += d.toString()));
    const timer = setTimeout(() => child.kill("SIGKILL"), ms);
    child.on("error", reject);
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      capturedOutput.push(out);
      resolve({ killed: signal === "SIGKILL", code });
    });
  });
}

export async function leftoverTempFiles(dir: string): Promise<string[]> {
  const found: string[] = [];
  for (const e of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (e.name.startsWith(".relcast-tmp-") || e.name.startsWith(".relcast-lock-")) found.push(path.join(e.parentPath, e.name));
  }
  return found;
}

export interface RandomKillsResult {
  seed: number;
  kills: number;
  finishedFirst: number;
  resumed: number;
  delays: number[];
}

/**
 * `runs` publishes of a `dmgBytes` disk image, each SIGKILLed at a random
 * moment within the duration of a first, unkilled publish, then re-run.
 * After every kill the feeds name only complete objects; every re-run
 * completes; `verify` passes at the end.
 */
export async function killAtRandom(ws: Workspace, store: ObjectStore, o: { label: string; runs: number; dmgBytes: number; seed: number }): Promise<RandomKillsResult> {
  const next = seeded(o.seed);
  const tag = `${o.label}, seed ${o.seed} (replay: RELCAST_RANDOM_KILLS_SEED=${o.seed})`;
  const probe = await ws.plugin("8.99.0", 8990, { dmgBytes: o.dmgBytes });
  const started = Date.now();
  const first = await runCli(ws.publishArgs(probe, "8.99.0", ["--quiet"]));
  expect(first.code, `${tag}: ${first.stderr}`).toBe(0);
  const duration = Date.now() - started;
  const result: RandomKillsResult = { seed: o.seed, kills: 0, finishedFirst: 0, resumed: 0, delays: [] };
  for (let i = 0; i < o.runs; i++) {
    const version = `9.${i}.0`;
    const p = await ws.plugin(version, 9000 + i, { dmgBytes: o.dmgBytes });
    const delay = Math.round(150 + next() * duration);
    result.delays.push(delay);
    const run = await runAndKillAfter(ws.publishArgs(p, version, ["--quiet"]), delay);
    if (run.killed) result.kills++;
    else result.finishedFirst++;
    expect(await feedProblems(store, "bridge-plugin"), `${tag}: after a kill at ${delay} ms`).toEqual([]);
    const again = await runCli(ws.publishArgs(p, version, ["--quiet"]));
    expect(again.code, `${tag}: re-run after a kill at ${delay} ms: ${again.stderr}`).toBe(0);
    result.resumed++;
    expect(await feedProblems(store, "bridge-plugin"), tag).toEqual([]);
  }
  const verify = await runCli(["verify", "--config", ws.configFile]);
  expect(verify.code, `${tag}: ${verify.stdout}${verify.stderr}`).toBe(0);
  console.log(`random kills (${tag}): ${result.kills} killed mid-run, ${result.finishedFirst} finished before the kill, ${result.resumed} re-runs completed; publish took ${duration} ms, kills at ${result.delays.join(", ")} ms`);
  return result;
}
