import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { readdir } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openStore } from "../../src/store/open-store.js";
import type { ObjectStore } from "../../src/store/object-store.js";
import { feedProblems } from "../helpers/feed-consistency.js";
import { motoUnavailableReason, startMotoServer, type MotoServer } from "../helpers/moto-server.js";
import { capturedOutput, CLI, REPO_ROOT, runCli } from "../helpers/run-cli.js";
import { makeWorkspace, type Workspace } from "../helpers/workspace.js";

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

function seeded(seed: number): () => number {
  let s = seed >>> 0;
  return () => ((s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 4294967296);
}

async function leftoverTempFiles(dir: string): Promise<string[]> {
  const found: string[] = [];
  for (const e of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (e.name.startsWith(".relcast-tmp-") || e.name.startsWith(".relcast-lock-")) found.push(path.join(e.parentPath, e.name));
  }
  return found;
}

/**
 * SIGKILL at random moments of a publish of a 24 MiB disk image (mostly while
 * it uploads), then the same command again. Returns kill and re-run counts.
 */
async function killAtRandom(ws: Workspace, store: ObjectStore, label: string, runs: number, seed: number): Promise<{ kills: number; finishedFirst: number; resumed: number; delays: number[] }> {
  const next = seeded(seed);
  const probe = await ws.plugin("8.99.0", 8990, { dmgBytes: 24 << 20 });
  const started = Date.now();
  expect((await runCli(ws.publishArgs(probe, "8.99.0", ["--quiet"]))).code).toBe(0);
  const duration = Date.now() - started;
  const result = { kills: 0, finishedFirst: 0, resumed: 0, delays: [] as number[] };
  for (let i = 0; i < runs; i++) {
    const version = `9.${i}.0`;
    const p = await ws.plugin(version, 9000 + i, { dmgBytes: 24 << 20 });
    const delay = Math.round(150 + next() * duration);
    result.delays.push(delay);
    const run = await runAndKillAfter(ws.publishArgs(p, version, ["--quiet"]), delay);
    if (run.killed) result.kills++;
    else result.finishedFirst++;
    expect(await feedProblems(store, "bridge-plugin"), `${label} after a kill at ${delay} ms`).toEqual([]);
    const again = await runCli(ws.publishArgs(p, version, ["--quiet"]));
    expect(again.code, `${label} re-run after a kill at ${delay} ms: ${again.stderr}`).toBe(0);
    result.resumed++;
    expect(await feedProblems(store, "bridge-plugin")).toEqual([]);
  }
  const verify = await runCli(["verify", "--config", ws.configFile]);
  expect(verify.code, verify.stdout + verify.stderr).toBe(0);
  return result;
}

describe("SIGKILL at random moments, then the same command again", () => {
  it("folder store: SIGKILL at random moments; feeds stay consistent, re-runs complete, gc leaves no temp file", async () => {
    const ws = await makeWorkspace();
    const store = await openStore(`file://${ws.storeDir}`, ws.dir);
    const r = await killAtRandom(ws, store, "folder", 6, 7);
    console.log(`random kills (folder): ${r.kills} killed mid-run, ${r.finishedFirst} finished before the kill, ${r.resumed} re-runs completed; delays ${r.delays.join(", ")} ms`);
    const gc = await runCli(["gc", "--config", ws.configFile, "--older-than", "0"]);
    expect(gc.code, gc.stderr).toBe(0);
    expect(await leftoverTempFiles(ws.storeDir)).toEqual([]);
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

    it("SIGKILL at random moments during uploads; feeds stay consistent, re-runs complete, gc aborts orphaned multipart uploads", async () => {
      const bucket = `rkill-${randomBytes(3).toString("hex")}`;
      const s3 = { endpoint: moto!.endpoint, forcePathStyle: true, region: "us-east-1" };
      const ws = await makeWorkspace({ store: `s3://${bucket}/site`, s3 });
      const store = await openStore(`s3://${bucket}/site`, ws.dir, { s3 });
      await fetch(`${moto!.endpoint}/${bucket}`, { method: "PUT" });
      const r = await killAtRandom(ws, store, "s3", 6, 11);
      console.log(`random kills (s3): ${r.kills} killed mid-run, ${r.finishedFirst} finished before the kill, ${r.resumed} re-runs completed; delays ${r.delays.join(", ")} ms`);
      const gc = await runCli(["gc", "--config", ws.configFile, "--older-than", "0"]);
      expect(gc.code, gc.stderr).toBe(0);
      const uploads = await fetch(`${moto!.endpoint}/${bucket}?uploads`).then((res) => res.text());
      expect(uploads).not.toMatch(/<Upload>/);
    }, 300_000);
  });
});
