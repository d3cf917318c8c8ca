// Gateway throughput (issue 25 item 5): HMAC-authenticated, proxied requests
// per second through `relcast gateway`, against a bare Node `http` proxy to
// the same upstream, on SQLite and on PostgreSQL. Everything runs on
// 127.0.0.1: the upstream, the bare proxy and each gateway are child
// processes; the load generator is this process, with keep-alive sockets and
// one HMAC signature made before each round (verifying is the gateway's
// work, signing is not), so both sides cost the generator the same.
// Bounded: every round stops at `requests` or `maxSeconds`, whichever first.
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import { startPostgresServer } from "../postgres-server.mjs";

const HOST = "127.0.0.1";
const HMAC = { id: "bench-hmac", secret: "bench-hmac-secret-value-000001" };

const UPSTREAM = `
const http = require("node:http");
const body = Buffer.from('{"ok":true}');
http.createServer((req, res) => {
  req.resume();
  req.on("end", () => { res.writeHead(200, { "content-type": "application/json", "content-length": body.length }); res.end(body); });
}).listen(0, "127.0.0.1", function () { console.error("listening on http://127.0.0.1:" + this.address().port); });
`;

// The reference: what a few lines of node:http do with no authentication, streaming both ways.
const BARE_PROXY = `
const http = require("node:http");
const upstream = new URL(process.argv[1]);
const agent = new http.Agent({ keepAlive: true, maxSockets: 256 });
http.createServer((req, res) => {
  const up = http.request({ hostname: upstream.hostname, port: upstream.port, method: req.method, path: req.url.replace(/^\\/v2\\/crm/, ""), headers: { ...req.headers, host: upstream.host }, agent }, (upRes) => {
    res.writeHead(upRes.statusCode, upRes.headers);
    upRes.pipe(res);
  });
  up.on("error", () => { res.statusCode = 502; res.end(); });
  req.pipe(up);
}).listen(0, "127.0.0.1", function () { console.error("listening on http://127.0.0.1:" + this.address().port); });
`;

function startChild(args, started, env = {}) {
  const child = spawn(process.execPath, args, { stdio: ["ignore", "ignore", "pipe"], env: { ...process.env, ...env } });
  started.push(child);
  return new Promise((resolve, reject) => {
    let err = "";
    child.stderr.setEncoding("utf8");
    child.stderr.on("data", (c) => {
      err += c;
      const m = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(err);
      if (m) resolve({ child, url: m[1] });
    });
    child.on("exit", (code) => reject(new Error(`${args.slice(0, 2).join(" ")} exited ${code}: ${err}`)));
  });
}

async function stopChild({ child }) {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.removeAllListeners("exit");
  const exited = new Promise((resolve) => child.once("exit", resolve));
  child.kill("SIGTERM");
  await exited;
}

function once(agent, url, target, headers) {
  return new Promise((resolve, reject) => {
    const req = http.request({ agent, host: url.hostname, port: url.port, path: target, headers }, (res) => {
      res.resume();
      res.on("end", () => resolve(res.statusCode));
    });
    req.on("error", reject);
    req.end();
  });
}

/** CPU seconds (user + system) a process has used so far, from /proc (Linux); undefined elsewhere. */
function cpuSeconds(pid) {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
    return (Number(fields[11]) + Number(fields[12])) / 100; // utime, stime in USER_HZ (100 on Linux)
  } catch {
    return undefined;
  }
}

/**
 * One bounded round: requests/s of `concurrency` keep-alive callers, and
 * the proxy process's CPU microseconds per request (what its throughput
 * would be bounded by on a core of its own: robust when the machine is busy).
 */
async function round(base, pid, headers, { requests, concurrency, maxSeconds }) {
  const url = new URL(base);
  const target = "/v2/crm/v1/ping?x=1";
  const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency });
  for (let i = 0; i < 200; i++) if ((await once(agent, url, target, headers)) !== 200) throw new Error(`warm-up call to ${base} failed`);
  let next = 0;
  let done = 0;
  let bad = 0;
  const deadline = Date.now() + maxSeconds * 1000;
  const cpu0 = cpuSeconds(pid);
  const t0 = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < requests && Date.now() < deadline) {
        next++;
        if ((await once(agent, url, target, headers)) !== 200) bad++;
        done++;
      }
    }),
  );
  const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
  const cpu1 = cpuSeconds(pid);
  agent.destroy();
  if (bad > 0) throw new Error(`${bad} of ${done} calls to ${base} did not answer 200`);
  return { reqPerSec: done / seconds, cpuMicros: cpu0 === undefined || cpu1 === undefined ? undefined : ((cpu1 - cpu0) * 1e6) / done };
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/**
 * Runs the comparison and returns one result per database:
 * { database, bareReqPerSec, gatewayReqPerSec, ratio }.
 */
export async function benchGatewayThroughput({ repo, tmp, runs = 3, requests = 20_000, concurrency = 32, maxSeconds = 15 }) {
  const { hashSecret } = await import(path.join(repo, "dist/src/gateway/secret-hash.js"));
  const { signRequest } = await import(path.join(repo, "dist/src/hmac/index.js"));
  const cli = path.join(repo, "dist/cli/relcast.mjs");
  const dir = await mkdtemp(path.join(tmp ?? os.tmpdir(), "relcast-bench-gateway-"));
  const started = [];
  let postgres;
  try {
    const upstream = await startChild(["-e", UPSTREAM], started);
    const bare = await startChild(["-e", BARE_PROXY, upstream.url], started);
    const configFile = path.join(dir, "gateway.json");
    await writeFile(
      configFile,
      JSON.stringify({
        oauthClients: [{ clientId: "bench-app", secretHash: await hashSecret("bench-app-secret"), redirectUrl: "http://127.0.0.1:1/cb", scopes: ["crm"] }],
        hmacCredentials: [{ clientId: HMAC.id, secret: HMAC.secret, company: "bench-co", product: "crm" }],
        products: { crm: { upstream: upstream.url } },
      }),
    );
    postgres = await startPostgresServer();
    const databases = { sqlite: path.join(dir, "state.sqlite"), postgresql: await postgres.createDatabase("bench") };
    const results = [];
    for (const [database, location] of Object.entries(databases)) {
      const gateway = await startChild([cli, "gateway", "--config", configFile, "--host", HOST, "--port", "0", "--db", location], started);
      const bareRounds = [];
      const gatewayRounds = [];
      const options = { requests, concurrency, maxSeconds };
      for (let i = 0; i < runs; i++) {
        const signed = signRequest({ clientId: HMAC.id, secret: HMAC.secret, method: "GET", url: "/v2/crm/v1/ping?x=1" });
        const order = i % 2 === 0 ? ["bare", "gateway"] : ["gateway", "bare"];
        for (const side of order) {
          if (side === "bare") bareRounds.push(await round(bare.url, bare.child.pid, {}, options));
          else gatewayRounds.push(await round(gateway.url, gateway.child.pid, signed.headers, options));
        }
      }
      await stopChild(gateway);
      const bareReqPerSec = median(bareRounds.map((r) => r.reqPerSec));
      const gatewayReqPerSec = median(gatewayRounds.map((r) => r.reqPerSec));
      const bareCpu = median(bareRounds.map((r) => r.cpuMicros ?? NaN));
      const gatewayCpu = median(gatewayRounds.map((r) => r.cpuMicros ?? NaN));
      const round2 = (x) => Math.round(x * 100) / 100;
      results.push({
        database,
        runs,
        bareReqPerSec: Math.round(bareReqPerSec),
        gatewayReqPerSec: Math.round(gatewayReqPerSec),
        ratio: round2(gatewayReqPerSec / bareReqPerSec),
        bareCpuMicrosPerRequest: Math.round(bareCpu),
        gatewayCpuMicrosPerRequest: Math.round(gatewayCpu),
        cpuRatio: Number.isNaN(bareCpu / gatewayCpu) ? undefined : round2(bareCpu / gatewayCpu),
      });
    }
    return results;
  } finally {
    for (const child of started.reverse()) await stopChild({ child });
    await postgres?.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

// `node scripts/bench/gateway-throughput.mjs [runs]`: this comparison alone.
if (import.meta.url === `file://${process.argv[1]}`) {
  const repo = path.resolve(path.dirname(new URL(import.meta.url).pathname), "../..");
  const results = await benchGatewayThroughput({ repo, runs: Number(process.argv[2] ?? 3) });
  for (const r of results) {
    console.log(
      `gateway HMAC proxy on ${r.database.padEnd(10)} ${String(r.gatewayReqPerSec).padStart(6)} req/s   bare node proxy ${String(r.bareReqPerSec).padStart(6)} req/s   ratio ${r.ratio.toFixed(2)} (target >= 0.80)` +
        `   CPU/request ${r.gatewayCpuMicrosPerRequest} vs ${r.bareCpuMicrosPerRequest} µs (ratio ${r.cpuRatio?.toFixed(2)})`,
    );
  }
}
