import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CLIENT, USER, startUpstream, testConfig, type Upstream } from "./harness.js";

/** The real `relcast gateway` binary, split into an auth process and an api process sharing one state file. */
const repo = path.resolve(import.meta.dirname, "../..");
const cli = path.join(repo, "dist/cli/relcast.mjs");

function startCli(args: string[]): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, [cli, "gateway", ...args], { stdio: ["ignore", "ignore", "pipe"] });
  return new Promise((resolve, reject) => {
    let err = "";
    child.stderr!.setEncoding("utf8");
    child.stderr!.on("data", (chunk: string) => {
      err += chunk;
      const m = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(err);
      if (m) resolve({ child, url: m[1]! });
    });
    child.on("exit", (code) => reject(new Error(`gateway exited ${code}: ${err}`)));
  });
}

function stop(child: ChildProcess): Promise<number | null> {
  return new Promise((resolve) => {
    child.removeAllListeners("exit");
    child.on("exit", (code) => resolve(code));
    child.kill("SIGTERM");
  });
}

describe("relcast gateway (CLI)", () => {
  let dir: string;
  let upstream: Upstream;
  let configFile: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), "relcast-gateway-cli-"));
    upstream = await startUpstream();
    configFile = path.join(dir, "gateway.json");
    await writeFile(configFile, JSON.stringify(await testConfig(upstream.url)));
  });
  afterAll(async () => {
    await upstream.close();
    await rm(dir, { recursive: true, force: true });
  });

  it("runs the auth routes and the product routes as two processes on one state file", async () => {
    const db = path.join(dir, "shared.sqlite");
    const auth = await startCli(["--config", configFile, "--port", "0", "--db", db, "--routes", "auth"]);
    const api = await startCli(["--config", configFile, "--port", "0", "--db", db, "--routes", "api"]);
    try {
      const page = await fetch(`${auth.url}/auth?client_id=${CLIENT.id}&response_type=code&scope=crm`);
      const html = await page.text();
      const request = /name="request" value="([^"]+)"/.exec(html)![1]!;
      const cookie = page.headers.get("set-cookie")!.split(";")[0]!;
      const approved = await fetch(`${auth.url}/auth`, {
        method: "POST",
        redirect: "manual",
        headers: { "content-type": "application/x-www-form-urlencoded", cookie },
        body: new URLSearchParams({ request, username: USER.name, password: USER.password, decision: "approve" }),
      });
      const code = new URL(approved.headers.get("location")!).searchParams.get("code")!;
      const tokenRes = await fetch(`${auth.url}/auth/oauth2/token`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ client_id: CLIENT.id, client_secret: CLIENT.secret, grant_type: "authorization_code", code, scope: "crm" }),
      });
      const { access_token } = (await tokenRes.json()) as { access_token: string };
      const call = await fetch(`${api.url}/v2/crm/v1/ping`, { headers: { authorization: `Bearer ${access_token}` } });
      expect(call.status).toBe(200);
      expect((await fetch(`${api.url}/auth/oauth2/token`, { method: "POST" })).status).toBe(404);
      expect((await fetch(`${auth.url}/v2/crm/v1/ping`, { headers: { authorization: `Bearer ${access_token}` } })).status).toBe(404);
    } finally {
      expect(await stop(auth.child)).toBe(0);
      expect(await stop(api.child)).toBe(0);
    }
  });

  it("exits with the E_CONFIG code and names the field for a bad config", async () => {
    const bad = path.join(dir, "bad.json");
    await writeFile(bad, JSON.stringify({ products: { crm: { upstream: "ftp://x" } } }));
    let status = 0;
    let stderr = "";
    try {
      execFileSync(process.execPath, [cli, "gateway", "--config", bad, "--port", "0"], { stdio: "pipe" });
    } catch (err) {
      status = (err as { status: number }).status;
      stderr = String((err as { stderr: Buffer }).stderr);
    }
    expect(status).toBe(3);
    expect(stderr).toContain(`${bad}: field "products.crm.upstream"`);
  });

  it("runs the bounded load test script once with small numbers", () => {
    const out = execFileSync(process.execPath, [path.join(repo, "scripts/gateway-load.mjs"), "--requests", "60", "--concurrency", "4", "--max-seconds", "20", "--json"], {
      encoding: "utf8",
    });
    const summary = JSON.parse(out) as { host: string; results: { name: string; requests: number; unexpected: number; reqPerSec: number; p99ms: number }[] };
    expect(summary.host).toBe("127.0.0.1");
    expect(summary.results).toHaveLength(6);
    for (const r of summary.results) {
      expect(r.unexpected, r.name).toBe(0);
      expect(r.requests).toBe(60);
      expect(r.reqPerSec).toBeGreaterThan(0);
      expect(r.p99ms).toBeGreaterThan(0);
    }
  });
});
