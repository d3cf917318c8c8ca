import http from "node:http";
import type { AddressInfo, Socket } from "node:net";

/**
 * The framing test's upstream: a plain node HTTP server that records every
 * request it parses (method, target, headers as sent, body) and answers each
 * with a number of its own in `x-upstream-id` and in the body, so an answer
 * the caller gets can be traced back to the upstream request it belongs to.
 * A target with a `/slow` segment is answered after a short delay, so that a
 * request the gateway did not mean to send can still be pending when the
 * gateway reuses the connection. Bytes it cannot parse are recorded too.
 */
export interface UpstreamRecord {
  id: number;
  /** Which upstream connection (as the gateway's agent opened them) carried it. */
  connection: number;
  method: string;
  url: string;
  rawHeaders: string[];
  body: Buffer;
  /** False when the request broke off before its body ended (the upstream never acts on it). */
  complete: boolean;
}

export interface UpstreamParseError {
  connection: number;
  code: string;
  bytes: string;
}

export interface RecordingUpstream {
  url: string;
  records: UpstreamRecord[];
  parseErrors: UpstreamParseError[];
  /** Requests whose body has not ended or whose answer has not been written yet. */
  pending(): number;
  /** Resolves when nothing is pending and no request came for `quietMs`, or after `maxMs`. */
  settle(quietMs: number, maxMs: number): Promise<void>;
  close(): Promise<void>;
}

export const SLOW_SEGMENT = "/slow";
/** On the upstream's 400 to bytes it could not parse. */
export const UNPARSEABLE_HEADER = "x-upstream-unparseable";
const SLOW_MS = 25;

export async function startRecordingUpstream(): Promise<RecordingUpstream> {
  const records: UpstreamRecord[] = [];
  const parseErrors: UpstreamParseError[] = [];
  const sockets = new Set<Socket>();
  const connectionIds = new WeakMap<Socket, number>();
  const timers = new Set<NodeJS.Timeout>();
  let connections = 0;
  let pending = 0;
  let lastEvent = Date.now();

  const server = http.createServer({ keepAliveTimeout: 60_000 }, (req, res) => {
    lastEvent = Date.now();
    pending++;
    const record: UpstreamRecord = {
      id: records.length + 1,
      connection: connectionIds.get(req.socket) ?? 0,
      method: req.method ?? "",
      url: req.url ?? "",
      rawHeaders: req.rawHeaders,
      body: Buffer.alloc(0),
      complete: false,
    };
    records.push(record);
    const chunks: Buffer[] = [];
    let settled = false;
    const done = () => {
      if (settled) return;
      settled = true;
      pending--;
      lastEvent = Date.now();
    };
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("error", done);
    req.on("close", () => {
      if (!record.complete) done();
    });
    req.on("end", () => {
      record.body = Buffer.concat(chunks);
      record.complete = true;
      const answer = () => {
        res.writeHead(200, { "content-type": "text/plain", "x-upstream-id": String(record.id) });
        res.end(`upstream-id ${record.id}\n`);
        done();
      };
      if (!record.url.includes(SLOW_SEGMENT)) return answer();
      const timer = setTimeout(() => {
        timers.delete(timer);
        answer();
      }, SLOW_MS);
      timers.add(timer);
    });
  });
  server.on("connection", (socket: Socket) => {
    connectionIds.set(socket, ++connections);
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  server.on("clientError", (err: NodeJS.ErrnoException & { rawPacket?: Buffer }, socket: Socket) => {
    lastEvent = Date.now();
    const code = err.code ?? "unknown";
    // A reset, or the end of the connection inside a request (HPE_INVALID_EOF_STATE), is the gateway giving up on a
    // request (its caller went away; the request stays broken off, never acted on), not bytes the upstream misread.
    if (code.startsWith("HPE_") && code !== "HPE_INVALID_EOF_STATE") parseErrors.push({ connection: connectionIds.get(socket) ?? 0, code, bytes: err.rawPacket?.toString("latin1") ?? "" });
    // node's own answer to bytes it cannot parse, marked so the test can tell it from the gateway's.
    if (socket.writable) socket.end(`HTTP/1.1 400 Bad Request\r\n${UNPARSEABLE_HEADER}: ${parseErrors.length}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
    else socket.destroy();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    records,
    parseErrors,
    pending: () => pending,
    async settle(quietMs, maxMs) {
      const until = Date.now() + maxMs;
      while (Date.now() < until && (pending > 0 || Date.now() - lastEvent < quietMs)) {
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const t of timers) clearTimeout(t);
        server.close(() => resolve());
        for (const s of sockets) s.destroy();
      }),
  };
}
