import { capturingLogger, registerSecret } from "../helpers/secrets.js";
import { mkdtemp, rm } from "node:fs/promises";
import http from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { manualClock, type ManualClock } from "../../src/gateway/clock.js";
import type { GatewayConfigInput } from "../../src/gateway/config-schema.js";
import type { HmacVerifier } from "../../src/gateway/hmac-verifier.js";
import { parseGatewayConfig } from "../../src/gateway/load-gateway-config.js";
import { hashSecret } from "../../src/gateway/secret-hash.js";
import { startGateway, type RunningGateway } from "../../src/gateway/start-gateway.js";

/**
 * A real upstream (echoes what it received as JSON) and a real gateway on
 * 127.0.0.1:0, with a manual clock and a temp SQLite file.
 */
export interface Received {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

export interface Upstream {
  url: string;
  received: Received[];
  /** Called with each request before the body is read, for streaming tests. */
  onRequest?: (req: http.IncomingMessage, res: http.ServerResponse) => boolean;
  close(): Promise<void>;
}

export async function startUpstream(): Promise<Upstream> {
  const upstream: Upstream = { url: "", received: [], close: async () => {} };
  const server = http.createServer((req, res) => {
    if (upstream.onRequest?.(req, res)) return;
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const entry = { method: req.method ?? "", url: req.url ?? "", headers: req.headers, body: Buffer.concat(chunks).toString("utf8") };
      upstream.received.push(entry);
      res.writeHead(200, { "content-type": "application/json", "x-upstream": "yes" });
      res.end(JSON.stringify(entry));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  upstream.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  upstream.close = () => new Promise((resolve) => { server.close(() => resolve()); server.closeAllConnections(); });
  return upstream;
}

export const CLIENT = { id: "app-one", secret: "app-one-secret-value", redirect: "https://app.example.test/callback?tenant=1" };
export const USER = { name: "alice", password: "correct horse battery" };
export const HMAC_CRED = { id: "hmac-crm-acme", secret: "hmac-secret-for-acme-crm-0001", company: "acme", product: "crm" };
export const HMAC_OTHER = { id: "hmac-billing-acme", secret: "hmac-secret-for-acme-billing-01", company: "acme", product: "billing" };

let hashes: Promise<[string, string]> | undefined;

export async function testConfig(upstreamUrl: string): Promise<GatewayConfigInput> {
  hashes ??= Promise.all([hashSecret(CLIENT.secret), hashSecret(USER.password)]);
  const [clientHash, userHash] = await hashes;
  return {
    oauthClients: [{ clientId: CLIENT.id, name: "App One", secretHash: clientHash, redirectUrl: CLIENT.redirect, scopes: ["crm", "billing:read", "billing"] }],
    users: [{ username: USER.name, passwordHash: userHash }],
    hmacCredentials: [
      { clientId: HMAC_CRED.id, secret: HMAC_CRED.secret, company: HMAC_CRED.company, product: HMAC_CRED.product },
      { clientId: HMAC_OTHER.id, secret: HMAC_OTHER.secret, company: HMAC_OTHER.company, product: HMAC_OTHER.product },
    ],
    products: {
      crm: { upstream: upstreamUrl },
      billing: { upstream: `${upstreamUrl}/billing-base` },
      hr: { upstream: upstreamUrl, auth: ["hmac"] },
    },
  };
}

export interface Harness {
  gateway: RunningGateway;
  upstream: Upstream;
  clock: ManualClock;
  dbFile: string;
  dir: string;
  restart(): Promise<void>;
  close(): Promise<void>;
}

/** `database`: a postgres:// URL to use instead of the temp SQLite file. */
export async function startHarness(verifyHmac: HmacVerifier, configure?: (c: GatewayConfigInput) => void, database?: string): Promise<Harness> {
  const dir = await mkdtemp(path.join(os.tmpdir(), "relcast-gateway-"));
  const dbFile = path.join(dir, "state.sqlite");
  const upstream = await startUpstream();
  const raw = await testConfig(upstream.url);
  configure?.(raw);
  const config = parseGatewayConfig(raw, "test-gateway.json");
  const clock = manualClock(new Date("2025-03-01T10:00:00Z"));
  registerSecret(CLIENT.secret, HMAC_CRED.secret, HMAC_OTHER.secret, USER.password);
  const start = () => startGateway({ config, database: database ?? dbFile, verifyHmac, port: 0, host: "127.0.0.1", clock, logger: capturingLogger(), accessLog: true });
  const harness: Harness = {
    gateway: await start(),
    upstream,
    clock,
    dbFile,
    dir,
    async restart() {
      await harness.gateway.close();
      harness.gateway = await start();
    },
    async close() {
      await harness.gateway.close();
      await upstream.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
  return harness;
}

/** A request with the exact request target given (fetch would normalise `..` and `%2e`). */
export function rawRequest(base: string, target: string, headers: Record<string, string> = {}): Promise<{ status: number; body: string }> {
  const url = new URL(base);
  return new Promise((resolve, reject) => {
    const req = http.request({ host: url.hostname, port: url.port, path: target, headers }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (c: string) => (body += c));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on("error", reject);
    req.end();
  });
}
