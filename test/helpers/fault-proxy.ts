import { randomBytes } from "node:crypto";
import http from "node:http";
import type { AddressInfo, Socket } from "node:net";

/**
 * What the proxy does to one request instead of (or after) forwarding it:
 * - `500` / `503-slowdown`: answers with an S3 error body, request not forwarded;
 * - `drop`: closes the connection before forwarding (a network failure);
 * - `stall`: accepts and never answers (the client's timeout must fire);
 * - `lost-response`: forwards, lets S3 apply it, then closes the connection
 *   without the answer (the client cannot know the write happened);
 * - `403-invalid-key`: what S3 answers to unknown credentials (moto does not check them);
 * - `200-not-stored`: answers a write with 200 and an ETag, but never forwards
 *   it (a write the store loses, as one that ignores conditions loses a race);
 * - `500-after-applied`: forwards, lets S3 apply it, then answers 500 with an
 *   HTML page (moto_server's answer when its handler fails midway);
 * - `404-no-such-upload`: answers NoSuchUpload, not forwarded (S3's answer to a
 *   Complete retried after the upload was completed).
 */
export type Fault = "500" | "503-slowdown" | "drop" | "stall" | "lost-response" | "403-invalid-key" | "200-not-stored" | "500-after-applied" | "404-no-such-upload";
export const RANDOM_FAULTS: readonly Fault[] = ["500", "503-slowdown", "drop", "stall", "lost-response"];

export interface RequestInfo {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
}

/** A fault at a chosen point: fires on the first `times` requests that match. */
export interface TargetedFault {
  name: string;
  match(req: RequestInfo): boolean;
  fault: Fault;
  times?: number;
}

export interface FaultProxy {
  endpoint: string;
  /** Requests seen, and faults injected by kind and by targeted rule. */
  stats: { requests: number; injected: Record<string, number>; targeted: Record<string, number> };
  /** Every request seen, in order of arrival (method, URL, headers). */
  seen: RequestInfo[];
  setRate(rate: number): void;
  target(rule: TargetedFault): void;
  /** Drops every targeted rule still armed. */
  clearTargets(): void;
  /**
   * Holds the first request (from now on) that matches, unforwarded, until `release`: `arrived`
   * resolves when it is held. A test acts between a client's requests this way (a source
   * overwritten after the copy's HEAD, before its parts).
   */
  hold(match: (req: RequestInfo) => boolean): { arrived: Promise<RequestInfo>; release(): void };
  /** Resolves with the first request (from now on) that matches, once it has arrived. */
  waitFor(match: (req: RequestInfo) => boolean): Promise<RequestInfo>;
  stop(): Promise<void>;
}

/** Deterministic PRNG (mulberry32), so a failing run can be replayed with its seed. */
function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function s3Error(res: http.ServerResponse, status: number, code: string): void {
  const body = `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${code}</Code><Message>injected by the test proxy</Message><RequestId>fault</RequestId></Error>`;
  res.writeHead(status, { "content-type": "application/xml", "content-length": Buffer.byteLength(body) });
  res.end(body);
}

/**
 * An HTTP proxy on 127.0.0.1 in front of an S3 server that injects faults at
 * a rate (chosen at random among `faults`) and at targeted points.
 */
export async function startFaultProxy(
  upstream: string,
  options: { rate: number; seed: number; faults?: readonly Fault[]; /** Request headers (lower case) never forwarded, as a careless gateway would. */ dropHeaders?: readonly string[] },
): Promise<FaultProxy> {
  const up = new URL(upstream);
  const random = rng(options.seed);
  const faults = options.faults ?? RANDOM_FAULTS;
  let rate = options.rate;
  const rules: Array<TargetedFault & { left: number }> = [];
  const stats: FaultProxy["stats"] = { requests: 0, injected: {}, targeted: {} };
  const seen: RequestInfo[] = [];
  const sockets = new Set<Socket>();
  const waiters: Array<{ match: (req: RequestInfo) => boolean; resolve: (req: RequestInfo) => void }> = [];
  const holds: Array<{ match: (req: RequestInfo) => boolean; arrived: (req: RequestInfo) => void; released: Promise<void> }> = [];

  function choose(info: RequestInfo): Fault | undefined {
    const rule = rules.find((r) => r.left > 0 && r.match(info));
    if (rule) {
      rule.left--;
      stats.targeted[rule.name] = (stats.targeted[rule.name] ?? 0) + 1;
      return rule.fault;
    }
    return random() < rate ? faults[Math.floor(random() * faults.length)] : undefined;
  }

  const server = http.createServer((req, res) => {
    stats.requests++;
    const info: RequestInfo = { method: req.method ?? "GET", url: req.url ?? "/", headers: req.headers };
    seen.push(info);
    for (const w of waiters.filter((x) => x.match(info))) {
      waiters.splice(waiters.indexOf(w), 1);
      w.resolve(info);
    }
    const held = holds.find((h) => h.match(info));
    if (held) {
      holds.splice(holds.indexOf(held), 1);
      req.pause();
      held.arrived(info);
      void held.released.then(() => handle(req, res, info));
      return;
    }
    handle(req, res, info);
  });

  function handle(req: http.IncomingMessage, res: http.ServerResponse, info: RequestInfo): void {
    const fault = choose(info);
    if (fault) stats.injected[fault] = (stats.injected[fault] ?? 0) + 1;
    if (fault === "500" || fault === "503-slowdown") {
      req.resume();
      req.once("end", () => (fault === "500" ? s3Error(res, 500, "InternalError") : s3Error(res, 503, "SlowDown")));
      return;
    }
    if (fault === "404-no-such-upload") {
      req.resume();
      req.once("end", () => s3Error(res, 404, "NoSuchUpload"));
      return;
    }
    if (fault === "403-invalid-key") {
      req.resume();
      req.once("end", () => s3Error(res, 403, "InvalidAccessKeyId"));
      return;
    }
    if (fault === "200-not-stored") {
      req.resume();
      req.once("end", () => {
        res.writeHead(200, { etag: `"${randomBytes(16).toString("hex")}"`, "content-length": 0 });
        res.end();
      });
      return;
    }
    if (fault === "drop") {
      req.socket.destroy();
      return;
    }
    if (fault === "stall") {
      req.pause(); // hold the connection open, answer nothing
      return;
    }
    const headers = { ...req.headers };
    delete headers.expect;
    for (const name of options.dropHeaders ?? []) delete headers[name];
    const forward = http.request(
      { host: up.hostname, port: up.port, method: req.method, path: req.url, headers },
      (upRes) => {
        if (fault === "500-after-applied") {
          upRes.resume();
          upRes.once("end", () => {
            const page = "<!doctype html>\n<html lang=en>\n<title>500 Internal Server Error</title>\n<h1>Internal Server Error</h1>\n";
            res.writeHead(500, { "content-type": "text/html; charset=utf-8", "content-length": Buffer.byteLength(page) });
            res.end(page);
          });
          return;
        }
        if (fault === "lost-response") {
          upRes.resume();
          upRes.once("end", () => req.socket.destroy());
          return;
        }
        res.writeHead(upRes.statusCode ?? 502, upRes.headers);
        upRes.pipe(res);
      },
    );
    forward.on("error", () => req.socket.destroy());
    req.pipe(forward);
  }
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    stats,
    seen,
    setRate: (r) => {
      rate = r;
    },
    target: (rule) => {
      rules.push({ ...rule, left: rule.times ?? 1 });
    },
    clearTargets: () => {
      rules.length = 0;
    },
    hold: (match) => {
      let release!: () => void;
      const released = new Promise<void>((resolve) => (release = resolve));
      const arrived = new Promise<RequestInfo>((resolve) => holds.push({ match, arrived: resolve, released }));
      return { arrived, release };
    },
    waitFor: (match) => new Promise((resolve) => waiters.push({ match, resolve })),
    stop: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
