#!/usr/bin/env node
// Bounded load test of the reference gateway, on 127.0.0.1 only.
//
//   npm run build && node scripts/gateway-load.mjs [--requests 2000] [--concurrency 16] [--max-seconds 30] [--json]
//
// Starts a tiny upstream in this process and `relcast gateway` as a child
// process (temp config and state), signs in through the real consent form to
// get a Bearer token, then measures requests/s and p50/p99 latency for:
//   direct upstream (no gateway), gateway without authentication (/healthz),
//   gateway rejecting a call without credentials (401),
//   gateway + Bearer (proxied), gateway + HMAC GET, gateway + HMAC POST with Digest.
// Every scenario is capped by --requests (max 50000) and --max-seconds (max 120).
import { spawn } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const { hashSecret } = await import(path.join(repo, "dist/src/gateway/secret-hash.js"));
const { signRequest } = await import(path.join(repo, "dist/src/hmac/index.js"));

const HOST = "127.0.0.1";
const args = process.argv.slice(2);
const flag = (name, fallback, max) => {
  const i = args.indexOf(`--${name}`);
  const value = i < 0 ? fallback : Number(args[i + 1]);
  if (!Number.isInteger(value) || value < 1) throw new Error(`--${name} must be a positive integer`);
  return Math.min(value, max);
};
const REQUESTS = flag("requests", 2000, 50_000);
const CONCURRENCY = flag("concurrency", 16, 256);
const MAX_SECONDS = flag("max-seconds", 30, 120);
const JSON_OUT = args.includes("--json");

const CLIENT = { id: "load-app", secret: "load-app-secret-value", redirect: "http://127.0.0.1:1/cb" };
const USER = { name: "loader", password: "load-password-123" };
const HMAC = { id: "load-hmac", secret: "load-hmac-secret-value-0001" };

function listen(server) {
  return new Promise((resolve) => server.listen(0, HOST, () => resolve(`http://${HOST}:${server.address().port}`)));
}

const upstream = http.createServer((req, res) => {
  req.resume();
  req.on("end", () => {
    res.writeHead(200, { "content-type": "application/json" });
    res.end('{"ok":true}');
  });
});
const upstreamUrl = await listen(upstream);

const dir = await mkdtemp(path.join(os.tmpdir(), "relcast-gateway-load-"));
const configFile = path.join(dir, "gateway.json");
await writeFile(
  configFile,
  JSON.stringify({
    oauthClients: [{ clientId: CLIENT.id, secretHash: await hashSecret(CLIENT.secret), redirectUrl: CLIENT.redirect, scopes: ["crm"] }],
    users: [{ username: USER.name, passwordHash: await hashSecret(USER.password) }],
    hmacCredentials: [{ clientId: HMAC.id, secret: HMAC.secret, company: "load-co", product: "crm" }],
    products: { crm: { upstream: upstreamUrl } },
  }),
);

const cliArgs = ["gateway", "--config", configFile, "--host", HOST, "--port", "0", "--db", path.join(dir, "state.sqlite")];
const child = spawn(process.execPath, [path.join(repo, "dist/cli/relcast.mjs"), ...cliArgs], { stdio: ["ignore", "ignore", "pipe"] });
const gatewayUrl = await new Promise((resolve, reject) => {
  let err = "";
  child.stderr.setEncoding("utf8");
  child.stderr.on("data", (c) => {
    err += c;
    const m = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(err);
    if (m) resolve(m[1]);
  });
  child.on("exit", (code) => reject(new Error(`gateway exited ${code}: ${err}`)));
});

async function bearerToken() {
  const page = await fetch(`${gatewayUrl}/auth?client_id=${CLIENT.id}&response_type=code&scope=crm`);
  const request = /name="request" value="([^"]+)"/.exec(await page.text())[1];
  const cookie = page.headers.get("set-cookie").split(";")[0];
  const approved = await fetch(`${gatewayUrl}/auth`, {
    method: "POST",
    redirect: "manual",
    headers: { "content-type": "application/x-www-form-urlencoded", cookie },
    body: new URLSearchParams({ request, username: USER.name, password: USER.password, decision: "approve" }),
  });
  const code = new URL(approved.headers.get("location")).searchParams.get("code");
  const res = await fetch(`${gatewayUrl}/auth/oauth2/token`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ client_id: CLIENT.id, client_secret: CLIENT.secret, grant_type: "authorization_code", code, scope: "crm" }),
  });
  return (await res.json()).access_token;
}

function once(agent, base, make) {
  const { method = "GET", path: target, headers = {}, body } = make();
  const url = new URL(base);
  return new Promise((resolve, reject) => {
    const started = process.hrtime.bigint();
    const req = http.request({ agent, host: url.hostname, port: url.port, method, path: target, headers }, (res) => {
      res.resume();
      res.on("end", () => resolve({ status: res.statusCode, ms: Number(process.hrtime.bigint() - started) / 1e6 }));
    });
    req.on("error", reject);
    req.end(body);
  });
}

async function scenario(name, base, make, expectStatus = 200) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: CONCURRENCY });
  for (let i = 0; i < Math.min(50, REQUESTS); i++) await once(agent, base, make); // warm-up
  const latencies = [];
  let next = 0;
  let unexpected = 0;
  const deadline = Date.now() + MAX_SECONDS * 1000;
  const started = process.hrtime.bigint();
  const worker = async () => {
    while (next < REQUESTS && Date.now() < deadline) {
      next++;
      const r = await once(agent, base, make);
      if (r.status !== expectStatus) unexpected++;
      latencies.push(r.ms);
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  agent.destroy();
  latencies.sort((a, b) => a - b);
  const pct = (p) => latencies[Math.min(latencies.length - 1, Math.floor((p / 100) * latencies.length))];
  return { name, requests: latencies.length, unexpected, reqPerSec: Math.round(latencies.length / seconds), p50ms: +pct(50).toFixed(2), p99ms: +pct(99).toFixed(2) };
}

const results = [];
try {
  const token = await bearerToken();
  const signed = (method, target, body) => {
    const s = signRequest({ clientId: HMAC.id, secret: HMAC.secret, method, url: target, body });
    return { method, path: target, headers: { ...s.headers, "content-type": "application/json" }, body };
  };
  results.push(await scenario("upstream direct (no gateway, no auth)", upstreamUrl, () => ({ path: "/v1/ping" })));
  results.push(await scenario("gateway, no auth (/healthz, not proxied)", gatewayUrl, () => ({ path: "/healthz" })));
  results.push(await scenario("gateway, no credentials -> 401", gatewayUrl, () => ({ path: "/v2/crm/v1/ping" }), 401));
  results.push(await scenario("gateway + Bearer, proxied", gatewayUrl, () => ({ path: "/v2/crm/v1/ping", headers: { authorization: `Bearer ${token}` } })));
  results.push(await scenario("gateway + HMAC GET, proxied", gatewayUrl, () => signed("GET", "/v2/crm/v1/ping?x=1")));
  // A signed POST is accepted once (replay refusal) and the Date has one-second resolution: each POST gets its own target.
  let posts = 0;
  results.push(await scenario("gateway + HMAC POST + Digest, proxied", gatewayUrl, () => signed("POST", `/v2/crm/v1/items?n=${posts++}`, '{"name":"load"}')));
} finally {
  child.removeAllListeners("exit");
  const exited = new Promise((resolve) => child.once("exit", resolve));
  child.kill("SIGTERM");
  await exited;
  await new Promise((resolve) => upstream.close(resolve));
  await rm(dir, { recursive: true, force: true });
}

const summary = { host: HOST, cpus: os.availableParallelism(), node: process.version, requests: REQUESTS, concurrency: CONCURRENCY, results };
if (JSON_OUT) {
  process.stdout.write(JSON.stringify(summary, null, 2) + "\n");
} else {
  console.log(`relcast gateway load test: ${REQUESTS} requests per scenario, concurrency ${CONCURRENCY}, ${summary.cpus} CPUs, node ${process.version}`);
  for (const r of results) {
    const extra = r.unexpected ? `   (${r.unexpected} unexpected statuses)` : "";
    console.log(`${r.name.padEnd(44)} ${String(r.reqPerSec).padStart(7)} req/s   p50 ${r.p50ms.toFixed(2).padStart(7)} ms   p99 ${r.p99ms.toFixed(2).padStart(7)} ms${extra}`);
  }
}
if (results.some((r) => r.unexpected > 0)) process.exitCode = 1;
