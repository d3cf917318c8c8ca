import { describe, expect, it } from "vitest";
import { feedProblems } from "../helpers/feed-consistency.js";
import { motoUnavailableReason } from "../helpers/moto-server.js";
import { runCli } from "../helpers/run-cli.js";
import { expectClearFailure, MiB, useFaultyS3 } from "../helpers/s3-faults.js";
import { bucketReader } from "../helpers/moto-http.js";

const reason = motoUnavailableReason();

/**
 * Publishing through a proxy that breaks chosen S3 requests: a multipart
 * part, the catalog swap, the credentials. The store a client reads
 * (straight from moto, past the proxy) stays consistent, failures are one
 * clear error, and re-running the same command completes.
 */
describe.skipIf(Boolean(reason))(`S3 faults at chosen requests (moto behind a fault proxy)${reason ? ` — skipped: ${reason}` : ""}`, () => {
  const s3 = useFaultyS3();

  it("targeted: a part failing mid-multipart is retried; a part that keeps failing fails the run clearly, the re-run completes and gc aborts the orphaned upload", async () => {
    const { ws, direct, directConfig, bucket } = await s3.setup();
    const p = await ws.plugin("5.0.0", 5000, { dmgBytes: 10 * MiB + 1 });
    // 10 MiB and a byte: three 5 MiB parts (the last one short), so there is a part 2 mid-upload.
    const isPart2 = (r: { method: string; url: string }) => r.method === "PUT" && /[?&]partNumber=2(&|$)/.test(r.url) && r.url.includes(".dmg");
    s3.proxy.target({ name: "part 2 answers 503 twice", match: isPart2, fault: "503-slowdown", times: 2 });
    const retried = await runCli(ws.publishArgs(p, "5.0.0", ["--quiet"]));
    expect(retried.code, retried.stderr).toBe(0);
    expect(s3.proxy.stats.targeted["part 2 answers 503 twice"]).toBe(2);

    const q = await ws.plugin("5.1.0", 5100, { dmgBytes: 10 * MiB + 1 });
    s3.proxy.target({ name: "part 2 dropped every time", match: isPart2, fault: "drop", times: 1000 });
    const failed = await runCli(ws.publishArgs(q, "5.1.0", ["--quiet"]));
    expect(failed.code).not.toBe(0);
    expectClearFailure(failed, "part 2 always dropped");
    expect(await feedProblems(direct, "bridge-plugin")).toEqual([]);
    const catalog = JSON.parse((await direct.get("releases/catalog.json"))!.body.toString("utf8"));
    expect(catalog.versions.map((v: { version: string }) => v.version)).toEqual(["5.0.0"]);
    expect(s3.proxy.stats.targeted["part 2 dropped every time"]).toBeGreaterThanOrEqual(5); // the SDK retried it
    s3.proxy.clearTargets();
    const again = await runCli(ws.publishArgs(q, "5.1.0", ["--quiet"]));
    expect(again.code, again.stderr).toBe(0);
    const gc = await runCli(["gc", "--config", directConfig, "--older-than", "0"]);
    expect(gc.code, gc.stderr).toBe(0);
    expect(await bucketReader(s3.moto.endpoint, bucket).uploads()).toEqual([]);
    const verify = await runCli(["verify", "--config", directConfig]);
    expect(verify.code, verify.stdout + verify.stderr).toBe(0);
  }, 600_000); // a hang guard, not a speed check

  it("targeted: the catalog swap's response is lost, or stalls, or the swap answers 500: the record lands exactly once", async () => {
    const { ws, direct, directConfig } = await s3.setup();
    const isCatalogSwap = (r: { method: string; url: string; headers: Record<string, unknown> }) =>
      r.method === "PUT" && r.url.split("?")[0]!.endsWith("/releases/catalog.json") && (r.headers["if-match"] !== undefined || r.headers["if-none-match"] !== undefined);
    const faults = ["lost-response", "stall", "500"] as const;
    for (const [i, fault] of faults.entries()) {
      const version = `6.${i}.0`;
      const p = await ws.plugin(version, 6000 + i);
      const name = `catalog swap: ${fault}`;
      s3.proxy.target({ name, match: isCatalogSwap, fault });
      const res = await runCli(ws.publishArgs(p, version, ["--quiet"]));
      expect(s3.proxy.stats.targeted[name], name).toBe(1);
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
  }, 600_000); // a hang guard, not a speed check

  it("wrong credentials (S3 answers 403 InvalidAccessKeyId): one clear store error pointing at the credentials, nothing written", async () => {
    const { ws, direct } = await s3.setup();
    const p = await ws.plugin("7.0.0", 7000);
    s3.proxy.target({ name: "bad credentials", match: () => true, fault: "403-invalid-key", times: 10_000 });
    try {
      const res = await runCli(ws.publishArgs(p, "7.0.0", ["--quiet"]));
      expect(res.code, res.stderr).toBe(9);
      expectClearFailure(res, "wrong credentials");
      expect(res.stderr).toMatch(/access denied\n {2}fix: check the AWS credentials in use/);
    } finally {
      s3.proxy.clearTargets();
    }
    const written: string[] = [];
    for await (const meta of direct.list("")) written.push(meta.key);
    expect(written).toEqual([]);
  });
});
