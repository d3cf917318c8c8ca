import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MOTO_ENV, motoUnavailableReason, startMotoServer, type MotoServer } from "../helpers/moto-server.js";
import { runCli } from "../helpers/run-cli.js";
import { makeWorkspace, type Workspace } from "../helpers/workspace.js";
import { openStore } from "../../src/store/open-store.js";
import type { ObjectStore } from "../../src/store/object-store.js";

const reason = motoUnavailableReason();

describe.skipIf(Boolean(reason))(`relcast verify on S3 (moto_server)${reason ? ` — skipped: ${reason}` : ""}`, () => {
  let moto: MotoServer;
  let ws: Workspace;
  let store: ObjectStore;

  beforeAll(async () => {
    moto = await startMotoServer();
    const bucket = `verify-${randomBytes(4).toString("hex")}`;
    const s3 = { endpoint: moto.endpoint, forcePathStyle: true, region: "us-east-1" };
    ws = await makeWorkspace({ store: `s3://${bucket}/plugins`, s3 });
    await promisify(execFile)("aws", ["--endpoint-url", moto.endpoint, "s3api", "create-bucket", "--bucket", bucket], { env: { ...process.env, ...MOTO_ENV } });
    for (const [version, build, flags] of [["1.0.0", 100, []], ["1.1.0", 110, ["--critical"]], ["1.0.1", 105, []]] as Array<[string, number, string[]]>) {
      const res = await runCli(ws.publishArgs(await ws.plugin(version, build), version, [...flags, "--quiet"]));
      expect(res.code, res.stderr).toBe(0);
    }
    store = await openStore(`s3://${bucket}/plugins`, ws.dir, { s3 });
  });

  afterAll(async () => {
    await store?.close?.();
    await moto?.stop();
  });

  it("passes the store three publishes wrote", async () => {
    const res = await runCli(["verify", "--config", ws.configFile, "--public-key", ws.key.publicKeyBase64]);
    expect(res.code, res.stdout + res.stderr).toBe(0);
    expect(res.stdout).toContain("3 release(s) verified, no problems");
    expect(res.stdout).toContain("latest: 1.1.0 ok");
  });

  it("names the release whose zip was overwritten with other bytes, and a latest copy that went stale", async () => {
    const key = "releases/1.0.0/bridge-plugin-1.0.0.zip";
    const original = (await store.get(key))!.body;
    const damaged = Buffer.from(original);
    damaged.write("DAMAGED!", 1500);
    await store.put(key, damaged, { contentType: "application/zip" });
    await store.put("releases/latest/bridge-plugin-1.1.0.dmg", "stale", { contentType: "application/x-apple-diskimage" });
    const res = await runCli(["verify", "--config", ws.configFile, "--public-key", ws.key.publicKeyBase64]);
    expect(res.code, res.stdout + res.stderr).toBe(11);
    expect(res.stdout).toMatch(/1\.0\.0: update zip releases\/1\.0\.0\/bridge-plugin-1\.0\.0\.zip has SHA-256/);
    expect(res.stdout).toMatch(/1\.0\.0: edSignature does not verify/);
    expect(res.stdout).toMatch(/latest: releases\/latest\/bridge-plugin-1\.1\.0\.dmg differs from releases\/1\.1\.0\/bridge-plugin-1\.1\.0\.dmg/);
    expect(res.stderr).toMatch(/verify found problems in latest, 1\.0\.0/);
  });
});
