import { randomBytes } from "node:crypto";
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { expect } from "vitest";
import { MOTO_ENV, type MotoServer } from "./moto-server.js";
import { runCli } from "./run-cli.js";
import { makeWorkspace, type Workspace } from "./workspace.js";

export const DEMO_RELEASES = [
  { version: "1.0.0", build: 100, at: "2026-09-01T09:00:00.000Z" },
  { version: "1.1.0", build: 110, at: "2026-10-01T09:00:00.000Z" },
  { version: "1.2.0", build: 120, at: "2026-11-01T09:00:00.000Z" },
] as const;

/** A workspace on a folder store, or on a fresh bucket of the given moto server. */
export async function storeWorkspace(moto?: MotoServer): Promise<Workspace> {
  if (!moto) return makeWorkspace();
  const bucket = `site-${randomBytes(4).toString("hex")}`;
  await promisify(execFile)("aws", ["--endpoint-url", moto.endpoint, "s3api", "create-bucket", "--bucket", bucket], { env: { ...process.env, ...MOTO_ENV } });
  return makeWorkspace({ store: `s3://${bucket}/site`, s3: { endpoint: moto.endpoint, forcePathStyle: true, region: "us-east-1" } });
}

/** Publishes the three demo releases through the real CLI and returns their records. */
export async function publishDemoReleases(ws: Workspace): Promise<Array<Record<string, any>>> {
  const records = [];
  for (const r of DEMO_RELEASES) {
    const p = await ws.plugin(r.version, r.build);
    const res = await runCli(ws.publishArgs(p, r.version, ["--json", "--published-at", r.at]));
    expect(res.code, res.stderr).toBe(0);
    records.push(JSON.parse(res.stdout));
  }
  return records;
}

/** Publishes each [version, build] in turn through the real CLI (no other flags). */
export async function publishVersions(ws: Workspace, releases: ReadonlyArray<readonly [string, number]>): Promise<void> {
  for (const [version, build] of releases) {
    const p = await ws.plugin(version, build);
    const res = await runCli(ws.publishArgs(p, version));
    expect(res.code, res.stderr).toBe(0);
  }
}
