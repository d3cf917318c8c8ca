// Gateway throughput (issue 25 item 5): HMAC-authenticated, proxied requests
// per second through `relcast gateway`, against a bare Node `http` proxy to
// the same upstream, on SQLite and on PostgreSQL. Everything runs on
// 127.0.0.1: the upstream, the bare proxy and both gateways (one per
// database, both running for the whole bench) are child processes; the load
// generator is this process, with keep-alive sockets and one HMAC signature
// made before each round (verifying is the gateway's work, signing is not).
// Every side gets the same signed request, the bare proxy too (it forwards
// Date and Authorization upstream, as a proxy that knows nothing of them
// does), so each side parses the same bytes and costs the generator the
// same.
//
// Fair and steady on a shared machine: every side is warmed up first (the
// JIT has settled before anything is timed); each run measures the three
// sides back to back in a rotating order (bare, sqlite, postgresql; then
// sqlite, postgresql, bare; ...), so load that comes and goes hits them
// alike; a database's ratio is the median over runs of its round divided by
// the bare round of the same run. The generator, the upstream and the proxy
// share the machine's cores, so req/s is bounded by all three; the CPU each
// proxy process spends per request (from /proc) is reported too, as is the
// load average before and after.
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
const TARGET = "/v2/crm/v1/ping?x=1";

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

function once(agent, url, headers) {
  return new Promise((resolve, reject) => {
    const req = http.request({ agent, host: url.hostname, port: url.port, path: TARGET, headers }, (res) => {
      res.resume();
      res.on("end", () => resolve(res.statusCode));
    });
    req.on("error", reject);
    req.end();
  });
}

/** CPU seconds (user + system, all threads) a process has used so far, from /proc (Linux); undefined elsewhere. */
function cpuSeconds(pid) {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
    return (Number(fields[11]) + Number(fields[12])) / 100; // utime, stime in USER_HZ (100 on Linux)
  } catch {
    return undefined;
  }
}

const perRequest = (before, after, n) => (before === undefined || after === undefined || n === 0 ? undefined : ((after - before) * 1e6) / n);

/**
 * One bounded round against one side: requests/s of `concurrency`
 * keep-alive callers, and CPU microseconds per request of the proxy, of
 * the upstream and of this load generator.
 */
async function round(side, upstreamPid, { requests, concurrency, maxSeconds }) {
  const url = new URL(side.url);
  const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency });
  const headers = side.sign();
  let next = 0;
  let ok = 0;
  const statuses = {};
  const deadline = Date.now() + maxSeconds * 1000;
  const cpu0 = { proxy: cpuSeconds(side.child.pid), upstream: cpuSeconds(upstreamPid), generator: process.cpuUsage() };
  const t0 = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < requests && Date.now() < deadline) {
        next++;
        const status = await once(agent, url, headers);
        if (status === 200) ok++;
        else statuses[status] = (statuses[status] ?? 0) + 1;
      }
    }),
  );
  const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
  const generator = process.cpuUsage(cpu0.generator);
  const cpu1 = { proxy: cpuSeconds(side.child.pid), upstream: cpuSeconds(upstreamPid) };
  agent.destroy();
  const failed = next - ok;
  // A stray failure is reported; more than 1 in 1,000 means the side is broken and its numbers mean nothing.
  if (failed > next / 1000) throw new Error(`${failed} of ${next} calls to ${side.name} did not answer 200: ${JSON.stringify(statuses)}`);
  return {
    reqPerSec: ok / seconds,
    failed,
    cpuMicros: perRequest(cpu0.proxy, cpu1.proxy, next),
    upstreamCpuMicros: perRequest(cpu0.upstream, cpu1.upstream, next),
    generatorCpuMicros: (generator.user + generator.system) / next,
  };
}

async function warmUp(side, calls) {
  const url = new URL(side.url);
  const agent = new http.Agent({ keepAlive: true, maxSockets: 8 });
  const headers = side.sign();
  for (let i = 0; i < calls; i += 8) {
    const statuses = await Promise.all(Array.from({ length: 8 }, () => once(agent, url, headers)));
    if (statuses.some((s) => s !== 200)) throw new Error(`warm-up call to ${side.name} answered ${statuses.find((s) => s !== 200)}`);
  }
  agent.destroy();
}

const median = (xs) => {
  const sorted = xs.filter((x) => x !== undefined && !Number.isNaN(x)).sort((a, b) => a - b);
  if (sorted.length === 0) return undefined;
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};
const round2 = (x) => (x === undefined ? undefined : Math.round(x * 100) / 100);
const whole = (x) => (x === undefined ? undefined : Math.round(x));
const loadAverage = () => os.loadavg().map((l) => Math.round(l * 100) / 100);

/**
 * Runs the comparison and returns one result per database: { database,
 * runs, bareReqPerSec, gatewayReqPerSec, ratio (median of the per-run
 * ratios), ratios (each run's), CPU µs per request of the gateway, the bare
 * proxy, the upstream and the generator, failed calls, load averages }.
 */
export async function benchGatewayThroughput({ repo, tmp, runs = 5, requests = 10_000, concurrency = 32, maxSeconds = 15, warmUpCalls = 3_000 }) {
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
    const sign = () => signRequest({ clientId: HMAC.id, secret: HMAC.secret, method: "GET", url: TARGET }).headers;
    const sides = [{ name: "bare", ...bare, sign }];
    for (const [database, location] of Object.entries(databases)) {
      const gateway = await startChild([cli, "gateway", "--config", configFile, "--host", HOST, "--port", "0", "--db", location], started);
      sides.push({ name: database, ...gateway, sign });
    }
    for (const side of sides) await warmUp(side, warmUpCalls);

    const loadBefore = loadAverage();
    const options = { requests, concurrency, maxSeconds };
    const rounds = Object.fromEntries(sides.map((s) => [s.name, []]));
    for (let i = 0; i < runs; i++) {
      for (let k = 0; k < sides.length; k++) {
        const side = sides[(i + k) % sides.length];
        rounds[side.name].push(await round(side, upstream.child.pid, options));
      }
    }
    const loadAfter = loadAverage();

    const bareRounds = rounds.bare;
    return Object.keys(databases).map((database) => {
      const gatewayRounds = rounds[database];
      const bareCpu = median(bareRounds.map((r) => r.cpuMicros));
      const gatewayCpu = median(gatewayRounds.map((r) => r.cpuMicros));
      const ratios = gatewayRounds.map((r, i) => r.reqPerSec / bareRounds[i].reqPerSec);
      return {
        database,
        runs,
        requestsPerRound: requests,
        concurrency,
        bareReqPerSec: whole(median(bareRounds.map((r) => r.reqPerSec))),
        gatewayReqPerSec: whole(median(gatewayRounds.map((r) => r.reqPerSec))),
        ratio: round2(median(ratios)),
        ratios: ratios.map(round2),
        bareCpuMicrosPerRequest: whole(bareCpu),
        gatewayCpuMicrosPerRequest: whole(gatewayCpu),
        cpuRatio: bareCpu === undefined || gatewayCpu === undefined ? undefined : round2(bareCpu / gatewayCpu),
        upstreamCpuMicrosPerRequest: whole(median([...bareRounds, ...gatewayRounds].map((r) => r.upstreamCpuMicros))),
        generatorCpuMicrosPerRequest: whole(median([...bareRounds, ...gatewayRounds].map((r) => r.generatorCpuMicros))),
        failedCalls: { bare: bareRounds.reduce((n, r) => n + r.failed, 0), gateway: gatewayRounds.reduce((n, r) => n + r.failed, 0) },
        loadAverage: { before: loadBefore, after: loadAfter },
      };
    });
  } finally {
    for (const child of started.reverse()) await stopChild({ child });
    await postgres?.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

/** One line per database, for this script and scripts/bench.mjs. */
export function describeGatewayRow(r) {
  return (
    `gateway HMAC proxy on ${r.database.padEnd(10)} ${String(r.gatewayReqPerSec).padStart(6)} req/s   bare node proxy ${String(r.bareReqPerSec).padStart(6)} req/s   ratio ${r.ratio.toFixed(2)} (runs ${r.ratios.map((x) => x.toFixed(2)).join(" ")}; target >= 0.80)` +
    `   CPU/request ${r.gatewayCpuMicrosPerRequest} vs ${r.bareCpuMicrosPerRequest} µs (ratio ${r.cpuRatio?.toFixed(2)}; upstream ${r.upstreamCpuMicrosPerRequest}, load generator ${r.generatorCpuMicrosPerRequest})` +
    `   failed calls ${r.failedCalls.gateway} vs ${r.failedCalls.bare}   load ${r.loadAverage.before.join(" ")} -> ${r.loadAverage.after.join(" ")}`
  );
}

// `node scripts/bench/gateway-throughput.mjs [runs] [requests per round]`: this comparison alone.
if (import.meta.url === `file://${process.argv[1]}`) {
  const repo = path.resolve(path.dirname(new URL(import.meta.url).pathname), "../..");
  const results = await benchGatewayThroughput({ repo, runs: Number(process.argv[2] ?? 5), requests: Number(process.argv[3] ?? 10_000) });
  for (const r of results) console.log(describeGatewayRow(r));
}
