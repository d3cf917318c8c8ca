import { mkdtemp, rm, writeFile } from "node:fs/promises";
import type http from "node:http";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { GatewayConfigInput } from "../../src/gateway/config-schema.js";
import { startGatewayProcess, type GatewayProcess } from "./gateway-process.js";
import { startUpstream, testConfig, type Harness, type Upstream } from "./harness.js";
import { tokensFor } from "./oauth-driver.js";

/**
 * Issue 34 item 5: SIGTERM drains the real `relcast gateway`: no new
 * connections, requests in flight finish (a proxied POST gets its
 * upstream's answer), connections close behind their last answer, then the
 * database closes and the process exits 0; at `shutdown.drainSeconds` what
 * is still busy is cut.
 */

/** An upstream that tells when a request has fully arrived and answers only when released. */
interface HeldUpstream {
  seen: string[];
  arrived: Promise<{ method: string; url: string; body: string }>;
  release(): void;
}

function holdRequests(upstream: Upstream): HeldUpstream {
  let arrive!: (r: { method: string; url: string; body: string }) => void;
  let release!: () => void;
  const released = new Promise<void>((r) => (release = r));
  const held: HeldUpstream = { seen: [], arrived: new Promise((r) => (arrive = r)), release };
  upstream.onRequest = (req: http.IncomingMessage, res: http.ServerResponse) => {
    held.seen.push(`${req.method} ${req.url}`);
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const body = Buffer.concat(chunks).toString("utf8");
      arrive({ method: req.method ?? "", url: req.url ?? "", body });
      void released.then(() => {
        res.writeHead(201, { "content-type": "application/json" });
        res.end(JSON.stringify({ stored: JSON.parse(body) as unknown }));
      });
    });
    return true;
  };
  return held;
}

/** A raw keep-alive connection: what was sent stays exactly as written; `closed` resolves with every byte received. */
function rawConnection(port: number): Promise<{ socket: net.Socket; closed: Promise<string> }> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, "127.0.0.1");
    let data = "";
    const closed = new Promise<string>((done) => socket.on("close", () => done(data)));
    socket.setEncoding("latin1");
    socket.on("data", (d: string) => (data += d));
    socket.once("error", reject);
    socket.once("connect", () => {
      // A reset after connecting ends the connection like a close: `closed` tells what arrived.
      socket.off("error", reject).on("error", () => undefined);
      resolve({ socket, closed });
    });
  });
}

function connectError(port: number): Promise<string> {
  return new Promise((resolve) => {
    const socket = net.connect(port, "127.0.0.1");
    socket.once("connect", () => {
      socket.destroy();
      resolve("connected");
    });
    socket.once("error", (err: NodeJS.ErrnoException) => resolve(err.code ?? "error"));
  });
}

/** The body of one raw HTTP/1.1 response: Content-Length, or chunked up to its last (zero) chunk, else undefined (cut short). */
function responseBody(response: string): string | undefined {
  const split = response.indexOf("\r\n\r\n");
  const head = response.slice(0, split);
  let rest = response.slice(split + 4);
  const length = /\r\ncontent-length: (\d+)/i.exec(head);
  if (length) return rest.length >= Number(length[1]) ? rest.slice(0, Number(length[1])) : undefined;
  if (!/\r\ntransfer-encoding: chunked/i.test(head)) return undefined;
  let body = "";
  for (;;) {
    const line = rest.indexOf("\r\n");
    if (line < 0) return undefined;
    const size = parseInt(rest.slice(0, line), 16);
    if (size === 0) return body;
    body += rest.slice(line + 2, line + 2 + size);
    rest = rest.slice(line + 2 + size + 2);
  }
}

function postRequest(port: number, token: string, target: string, body: string): string {
  return `POST ${target} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
}

describe("relcast gateway drains on SIGTERM", () => {
  let dir: string;
  let upstream: Upstream;
  const running: GatewayProcess[] = [];

  async function start(configure: (c: GatewayConfigInput) => void = () => undefined): Promise<GatewayProcess> {
    const config = await testConfig(upstream.url);
    configure(config);
    const file = path.join(dir, `gateway-${running.length}.json`);
    await writeFile(file, JSON.stringify(config));
    const gateway = await startGatewayProcess(["--config", file, "--port", "0", "--db", path.join(dir, `state-${running.length}.sqlite`)]);
    running.push(gateway);
    return gateway;
  }

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), "relcast-gateway-drain-"));
    upstream = await startUpstream();
  });
  afterAll(async () => {
    await Promise.all(running.map((g) => g.stop("SIGKILL")));
    await upstream?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it("a proxied POST in flight gets its upstream's whole answer, with Connection: close; new connections are refused; then exit 0", async () => {
    const gateway = await start();
    const tokens = await tokensFor({ gateway: { url: gateway.url } } as Harness);
    const held = holdRequests(upstream);
    const conn = await rawConnection(gateway.port);
    const payload = JSON.stringify({ order: 42, note: "x".repeat(2000) });
    conn.socket.write(postRequest(gateway.port, tokens.access_token, "/v2/crm/v1/orders", payload));
    expect(await held.arrived).toEqual({ method: "POST", url: "/v1/orders", body: payload });

    gateway.child.kill("SIGTERM");
    await gateway.logged(/relcast gateway: SIGTERM/);
    // A request pipelined on the busy connection during the drain: never run, so never carried out unanswered.
    conn.socket.write(`GET /v2/crm/v1/pipelined HTTP/1.1\r\nHost: 127.0.0.1:${gateway.port}\r\nAuthorization: Bearer ${tokens.access_token}\r\n\r\n`);
    expect(await connectError(gateway.port)).toBe("ECONNREFUSED");

    held.release();
    const received = await conn.closed;
    const responses = received.split(/(?=HTTP\/1\.1 \d{3} )/);
    expect(responses).toHaveLength(1);
    const head = received.split("\r\n\r\n")[0]!;
    expect(head).toMatch(/^HTTP\/1\.1 201 /);
    expect(head).toMatch(/\r\nconnection: close(\r\n|$)/i);
    expect(JSON.parse(responseBody(received) ?? "null")).toEqual({ stored: JSON.parse(payload) });
    expect(await gateway.exited).toBe(0);
    expect(held.seen).toEqual(["POST /v1/orders"]);
    expect(gateway.stderr()).toContain("relcast gateway: closed");
    expect(gateway.stderr()).not.toContain("were closed before their requests finished");
    upstream.onRequest = undefined;
  });

  it("an answer that began before SIGTERM ends with its connection; a request pipelined behind it is answered 503 with Connection: close, never forwarded", async () => {
    const gateway = await start();
    const tokens = await tokensFor({ gateway: { url: gateway.url } } as Harness);
    const seen: string[] = [];
    let finish!: () => void;
    const finishing = new Promise<void>((r) => (finish = r));
    let headersSent!: () => void;
    const started = new Promise<void>((r) => (headersSent = r));
    upstream.onRequest = (req, res) => {
      seen.push(`${req.method} ${req.url}`);
      res.writeHead(200, { "content-type": "text/plain" });
      res.write("first half, ");
      headersSent();
      void finishing.then(() => res.end("second half"));
      return true;
    };
    const conn = await rawConnection(gateway.port);
    const firstBytes = new Promise<void>((r) => conn.socket.once("data", () => r()));
    conn.socket.write(`GET /v2/crm/v1/stream HTTP/1.1\r\nHost: 127.0.0.1:${gateway.port}\r\nAuthorization: Bearer ${tokens.access_token}\r\n\r\n`);
    await started;
    await firstBytes;

    gateway.child.kill("SIGTERM");
    await gateway.logged(/relcast gateway: SIGTERM/);
    conn.socket.write(postRequest(gateway.port, tokens.access_token, "/v2/crm/v1/orders", '{"late":true}'));
    finish();
    const received = await conn.closed;
    const [first, second] = received.split(/(?=HTTP\/1\.1 \d{3} )/);
    expect(first).toMatch(/^HTTP\/1\.1 200 /);
    expect(responseBody(first!)).toBe("first half, second half");
    expect(second).toMatch(/^HTTP\/1\.1 503 /);
    expect(second).toMatch(/\r\nconnection: close\r\n/i);
    expect(second).toContain('"error":"temporarily_unavailable"');
    expect(await gateway.exited).toBe(0);
    expect(seen).toEqual(["GET /v1/stream"]);
    upstream.onRequest = undefined;
  });

  it("requests pipelined before SIGTERM are all answered, in order, and only the last answer closes the connection", async () => {
    const gateway = await start();
    const tokens = await tokensFor({ gateway: { url: gateway.url } } as Harness);
    const seen: string[] = [];
    let release!: () => void;
    const released = new Promise<void>((r) => (release = r));
    // The gateway takes a connection's requests one at a time (http/one-at-a-time.ts): the second reaches the
    // upstream once the first is answered, which is after SIGTERM here.
    let firstArrived!: () => void;
    const arrived = new Promise<void>((r) => (firstArrived = r));
    upstream.onRequest = (req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        const body = Buffer.concat(chunks).toString("utf8");
        seen.push(body);
        if (seen.length === 1) firstArrived();
        void released.then(() => res.writeHead(201, { "content-type": "application/json", "content-length": String(Buffer.byteLength(body)) }).end(body));
      });
      return true;
    };
    const conn = await rawConnection(gateway.port);
    conn.socket.write(postRequest(gateway.port, tokens.access_token, "/v2/crm/v1/orders", '{"n":1}') + postRequest(gateway.port, tokens.access_token, "/v2/crm/v1/orders", '{"n":2}'));
    await arrived;
    gateway.child.kill("SIGTERM");
    await gateway.logged(/relcast gateway: SIGTERM/);
    release();
    const [first, second, ...more] = (await conn.closed).split(/(?=HTTP\/1\.1 \d{3} )/);
    expect(more).toEqual([]);
    expect(responseBody(first!)).toBe('{"n":1}');
    expect(first).not.toMatch(/\r\nconnection: close\r\n/i);
    expect(responseBody(second ?? "")).toBe('{"n":2}');
    expect(second).toMatch(/\r\nconnection: close\r\n/i);
    expect(await gateway.exited).toBe(0);
    expect(seen.sort()).toEqual(['{"n":1}', '{"n":2}']);
    upstream.onRequest = undefined;
  });

  it("at shutdown.drainSeconds, a request still waiting on its upstream is cut, and the process exits 0 saying so", async () => {
    const gateway = await start((c) => {
      c.shutdown = { drainSeconds: 1 };
    });
    const tokens = await tokensFor({ gateway: { url: gateway.url } } as Harness);
    const held = holdRequests(upstream);
    const conn = await rawConnection(gateway.port);
    conn.socket.write(postRequest(gateway.port, tokens.access_token, "/v2/crm/v1/orders", '{"slow":true}'));
    await held.arrived;
    gateway.child.kill("SIGTERM");
    expect(await conn.closed).toBe("");
    expect(await gateway.exited).toBe(0);
    expect(gateway.stderr()).toContain("1 connection(s) were closed before their requests finished (shutdown.drainSeconds: 1)");
    held.release();
    upstream.onRequest = undefined;
  });
});
