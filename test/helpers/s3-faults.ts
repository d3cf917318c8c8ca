import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, expect } from "vitest";
import { openStore } from "../../src/store/open-store.js";
import type { ObjectStore } from "../../src/store/object-store.js";
import { startFaultProxy, type FaultProxy } from "./fault-proxy.js";
import { MOTO_ENV, startMotoServer, type MotoServer } from "./moto-server.js";
import type { CliResult } from "./run-cli.js";
import { makeWorkspace, type Workspace } from "./workspace.js";

export const MiB = 1 << 20;

export interface FaultyS3 {
  moto: MotoServer;
  proxy: FaultProxy;
  /** A bucket and a workspace publishing through the proxy; `direct` reads straight from moto, past the proxy. */
  setup(): Promise<{ ws: Workspace; direct: ObjectStore; directConfig: string; bucket: string }>;
  multipartUploads(bucket: string): Promise<number>;
}

/**
 * moto behind a fault proxy for the file (started in beforeAll, stopped in
 * afterAll). Publishes go through the proxy with 5 MiB multipart parts (the
 * S3 minimum: a 12 MiB disk image is three parts) and a short idle timeout,
 * so a stalled request is abandoned (and retried) in 1.5 s.
 */
export function useFaultyS3(): FaultyS3 {
  const ctx = {} as FaultyS3;
  beforeAll(async () => {
    ctx.moto = await startMotoServer();
    ctx.proxy = await startFaultProxy(ctx.moto.endpoint, { rate: 0, seed: Number(process.env.RELCAST_FAULT_SEED ?? 20261124) });
  });
  afterAll(async () => {
    await ctx.proxy?.stop();
    await ctx.moto?.stop();
  });
  ctx.setup = async () => {
    const bucket = `fault-${randomBytes(3).toString("hex")}`;
    const s3 = { forcePathStyle: true, region: "us-east-1" };
    const ws = await makeWorkspace({ store: `s3://${bucket}/site`, s3: { ...s3, endpoint: ctx.proxy.endpoint, requestTimeoutMs: 1500, partSizeMiB: 5 } });
    await fetch(`${ctx.moto.endpoint}/${bucket}`, { method: "PUT" });
    const directConfig = path.join(ws.dir, "direct.config.json");
    await writeFile(directConfig, JSON.stringify({
      pluginId: "bridge-plugin", displayName: "Bridge Plugin", publisher: "Example Tools", appUrl: "https://updates.example.com",
      timezone: "America/New_York", store: `s3://${bucket}/site`, s3: { ...s3, endpoint: ctx.moto.endpoint },
    }));
    const direct = await openStore(`s3://${bucket}/site`, ws.dir, { s3: { ...s3, endpoint: ctx.moto.endpoint } });
    return { ws, direct, directConfig, bucket };
  };
  ctx.multipartUploads = async (bucket) => {
    const out = (await promisify(execFile)("aws", ["--endpoint-url", ctx.moto.endpoint, "s3api", "list-multipart-uploads", "--bucket", bucket], { env: { ...process.env, ...MOTO_ENV } })).stdout;
    return out.trim() === "" ? 0 : (JSON.parse(out).Uploads ?? []).length;
  };
  return ctx;
}

/** One `relcast: error [...]` line with a fix, no stack trace. */
export function expectClearFailure(res: CliResult, label: string): void {
  const errors = res.stderr.split("\n").filter((l) => l.startsWith("relcast: error ["));
  expect(errors, `${label}: ${res.stderr}`).toHaveLength(1);
  expect(res.stderr, label).toMatch(/\n {2}fix: /);
  expect(res.stderr, label).not.toMatch(/internal error|at .*\.js:\d+/);
}
