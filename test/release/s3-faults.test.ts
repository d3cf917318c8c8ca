import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openStore } from "../../src/store/open-store.js";
import type { ObjectStore } from "../../src/store/object-store.js";
import { startFaultProxy, type FaultProxy } from "../helpers/fault-proxy.js";
import { feedProblems } from "../helpers/feed-consistency.js";
import { MOTO_ENV, motoUnavailableReason, startMotoServer, type MotoServer } from "../helpers/moto-server.js";
import { runCli, type CliResult } from "../helpers/run-cli.js";
import { makeWorkspace, type Workspace } from "../helpers/workspace.js";

const reason = motoUnavailableReason();
const MiB = 1 << 20;

/**
 * Publishing through a proxy that breaks S3 requests on purpose. Whatever
 * happens, the store a client reads (straight from moto, past the proxy)
 * stays consistent, and re-running the same command completes.
 */
describe.skipIf(Boolean(reason))(`S3 faults: 500/503/drops/stalls/lost responses (moto behind a fault proxy)${reason ? ` — skipped: ${reason}` : ""}`, () => {
  let moto: MotoServer;
  let proxy: FaultProxy;
  beforeAll(async () => {
    moto = await startMotoServer();
    proxy = await startFaultProxy(moto.endpoint, { rate: 0, seed: Number(process.env.RELCAST_FAULT_SEED ?? 20261124) });
  });
  afterAll(async () => {
    await proxy?.stop();
    await moto?.stop();
  });

  async function setup(): Promise<{ ws: Workspace; direct: ObjectStore; directConfig: string; bucket: string }> {
    const bucket = `fault-${randomBytes(3).toString("hex")}`;
    const s3 = { forcePathStyle: true, region: "us-east-1" };
    // Short idle timeout so a stalled request is abandoned (and retried) in 1.5 s.
    const ws = await makeWorkspace({ store: `s3://${bucket}/site`, s3: { ...s3, endpoint: proxy.endpoint, requestTimeoutMs: 1500 } });
    await fetch(`${moto.endpoint}/${bucket}`, { method: "PUT" });
    const directConfig = path.join(ws.dir, "direct.config.json");
    await writeFile(directConfig, JSON.stringify({
      pluginId: "bridge-plugin", displayName: "Bridge Plugin", publisher: "Example Tools", appUrl: "https://updates.example.com",
      timezone: "America/New_York", store: `s3://${bucket}/site`, s3: { ...s3, endpoint: moto.endpoint },
    }));
    const direct = await openStore(`s3://${bucket}/site`, ws.dir, { s3: { ...s3, endpoint: moto.endpoint } });
    return { ws, direct, directConfig, bucket };
  }

  function expectClearFailure(res: CliResult, label: string): void {
    const errors = res.stderr.split("\n").filter((l) => l.startsWith("relcast: error ["));
    expect(errors, `${label}: ${res.stderr}`).toHaveLength(1);
    expect(res.stderr, label).toMatch(/\n {2}fix: /);
    expect(res.stderr, label).not.toMatch(/internal error|at .*\.js:\d+/);
  }

  async function multipartUploads(bucket: string): Promise<number> {
    const out = (await promisify(execFile)("aws", ["--endpoint-url", moto.endpoint, "s3api", "list-multipart-uploads", "--bucket", bucket], { env: { ...process.env, ...MOTO_ENV } })).stdout;
    return out.trim() === "" ? 0 : (JSON.parse(out).Uploads ?? []).length;
  }

  it("10% of requests fail at random: every publish completes or fails clearly, the feeds stay consistent, re-runs complete, verify passes", async () => {
    const { ws, direct, directConfig } = await setup();
    const versions = ["4.0.0", "4.1.0", "4.2.0", "4.3.0", "4.4.0", "4.5.0"];
    const outcomes = { completed: 0, failedClearly: 0, attempts: 0 };
    const before = proxy.stats.requests;
    const injectedBefore = { ...proxy.stats.injected };
    proxy.setRate(0.1);
    try {
      for (const [i, version] of versions.entries()) {
        // Two releases large enough for multipart (8 MiB parts), the rest small.
        const p = await ws.plugin(version, 4000 + i, i % 3 === 0 ? { dmgBytes: 18 * MiB } : {});
        let done = false;
        for (let attempt = 1; attempt <= 8 && !done; attempt++) {
          outcomes.attempts++;
          const res = await runCli(ws.publishArgs(p, version, ["--quiet"]));
          if (res.code === 0) {
            outcomes.completed++;
            done = true;
          } else {
            outcomes.failedClearly++;
            expectClearFailure(res, `${version} attempt ${attempt}`);
          }
          expect(await feedProblems(direct, "bridge-plugin"), `${version} attempt ${attempt}`).toEqual([]);
        }
        expect(done, `${version} never completed in 8 attempts`).toBe(true);
      }
    } finally {
      proxy.setRate(0);
    }
    const injected = Object.fromEntries(Object.entries(proxy.stats.injected).map(([k, n]) => [k, n - (injectedBefore[k] ?? 0)]));
    console.log(`s3 faults (10%): ${proxy.stats.requests - before} requests, injected ${JSON.stringify(injected)}; ${versions.length} releases, ${outcomes.attempts} runs: ${outcomes.completed} completed, ${outcomes.failedClearly} failed with a clear error and were re-run`);
    expect(Object.values(injected).reduce((a, b) => a + b, 0)).toBeGreaterThan(10);
    const catalog = JSON.parse((await direct.get("releases/catalog.json"))!.body.toString("utf8"));
    expect(catalog.versions.map((v: { version: string }) => v.version).sort()).toEqual(versions);
    const verify = await runCli(["verify", "--config", directConfig]);
    expect(verify.code, verify.stdout + verify.stderr).toBe(0);
  }, 420_000);

  it("targeted: a part failing mid-multipart is retried; a part that keeps failing fails the run clearly, the re-run completes and gc aborts the orphaned upload", async () => {
    const { ws, direct, directConfig, bucket } = await setup();
    const p = await ws.plugin("5.0.0", 5000, { dmgBytes: 20 * MiB });
    const isPart2 = (r: { method: string; url: string }) => r.method === "PUT" && /[?&]partNumber=2(&|$)/.test(r.url) && r.url.includes(".dmg");
    proxy.target({ name: "part 2 answers 503 twice", match: isPart2, fault: "503-slowdown", times: 2 });
    const retried = await runCli(ws.publishArgs(p, "5.0.0", ["--quiet"]));
    expect(retried.code, retried.stderr).toBe(0);
    expect(proxy.stats.targeted["part 2 answers 503 twice"]).toBe(2);

    const q = await ws.plugin("5.1.0", 5100, { dmgBytes: 20 * MiB });
    proxy.target({ name: "part 2 dropped every time", match: isPart2, fault: "drop", times: 1000 });
    const failed = await runCli(ws.publishArgs(q, "5.1.0", ["--quiet"]));
    expect(failed.code).not.toBe(0);
    expectClearFailure(failed, "part 2 always dropped");
    expect(await feedProblems(direct, "bridge-plugin")).toEqual([]);
    const catalog = JSON.parse((await direct.get("releases/catalog.json"))!.body.toString("utf8"));
    expect(catalog.versions.map((v: { version: string }) => v.version)).toEqual(["5.0.0"]);
    expect(proxy.stats.targeted["part 2 dropped every time"]).toBeGreaterThanOrEqual(5); // the SDK retried it
    proxy.clearTargets();
    const again = await runCli(ws.publishArgs(q, "5.1.0", ["--quiet"]));
    expect(again.code, again.stderr).toBe(0);
    const gc = await runCli(["gc", "--config", directConfig, "--older-than", "0"]);
    expect(gc.code, gc.stderr).toBe(0);
    expect(await multipartUploads(bucket)).toBe(0);
    const verify = await runCli(["verify", "--config", directConfig]);
    expect(verify.code, verify.stdout + verify.stderr).toBe(0);
  }, 300_000);

  it("targeted: the catalog swap's response is lost, or stalls, or the swap answers 500: the record lands exactly once", async () => {
    const { ws, direct, directConfig } = await setup();
    const isCatalogSwap = (r: { method: string; url: string; headers: Record<string, unknown> }) =>
      r.method === "PUT" && r.url.split("?")[0]!.endsWith("/releases/catalog.json") && (r.headers["if-match"] !== undefined || r.headers["if-none-match"] !== undefined);
    const faults = ["lost-response", "stall", "500"] as const;
    for (const [i, fault] of faults.entries()) {
      const version = `6.${i}.0`;
      const p = await ws.plugin(version, 6000 + i);
      const name = `catalog swap: ${fault}`;
      proxy.target({ name, match: isCatalogSwap, fault });
      const res = await runCli(ws.publishArgs(p, version, ["--quiet"]));
      expect(proxy.stats.targeted[name], name).toBe(1);
      if (res.code !== 0) {
        expectClearFailure(res, name);
        const again = await runCli(ws.publishArgs(p, version, ["--quiet"]));
        expect(again.code, again.stderr).toBe(0);
      }
      const catalog = JSON.parse((await direct.get("releases/catalog.json"))!.body.toString("utf8"));
      const listed = catalog.versions.map((v: { version: string }) => v.version);
      expect(listed.filter((v: string) => v === version), name).toHaveLength(1);
      expect(catalog.count).toBe(i + 1);
      expect(await feedProblems(direct, "bridge-plugin")).toEqual([]);
    }
    const verify = await runCli(["verify", "--config", directConfig]);
    expect(verify.code, verify.stdout + verify.stderr).toBe(0);
  }, 300_000);

  it("wrong credentials (S3 answers 403 InvalidAccessKeyId): one clear store error pointing at the credentials, nothing written", async () => {
    const { ws, direct } = await setup();
    const p = await ws.plugin("7.0.0", 7000);
    proxy.target({ name: "bad credentials", match: () => true, fault: "403-invalid-key", times: 10_000 });
    try {
      const res = await runCli(ws.publishArgs(p, "7.0.0", ["--quiet"]));
      expect(res.code, res.stderr).toBe(9);
      expectClearFailure(res, "wrong credentials");
      expect(res.stderr).toMatch(/access denied\n {2}fix: check the AWS credentials in use/);
    } finally {
      proxy.clearTargets();
    }
    const written: string[] = [];
    for await (const meta of direct.list("")) written.push(meta.key);
    expect(written).toEqual([]);
  }, 120_000);
});
