import type { IncomingMessage, RequestListener, Server, ServerResponse } from "node:http";
import type { Socket } from "node:net";
import { isAnswerHeld } from "./answer-hold.js";
import { HttpError, writeHttpError } from "./http-error.js";

/**
 * A graceful close of node's HTTP server (what SIGTERM starts):
 *
 * 1. stop accepting connections, close the idle keep-alive ones;
 * 2. let the requests in flight finish; the last answer of each connection,
 *    if not yet begun, and every request still arriving on an open
 *    connection, is answered with `Connection: close` (Go's
 *    `Server.Shutdown` does the same), so a
 *    proxy in front (nginx, envoy) stops reusing the connection and sends
 *    its next request elsewhere; connections close as their last answer ends;
 * 3. at the deadline, cut every connection still open, except those whose
 *    answer an endpoint held (answer-hold.ts: a committed grant);
 * 4. resolve once every connection is closed (the caller then closes the
 *    database, which held answers still needed).
 *
 * A request pipelined behind another one during the drain is not run: the
 * connection closes after the answer before it, so its own answer could
 * never be delivered (a POST would be carried out with nobody told). It is
 * answered 503 with `Connection: close` if that answer can still go out, and
 * a pipelining client resends unanswered requests on a new connection (RFC
 * 9112 §9.3.2).
 */
export interface DrainReport {
  /** Connections cut at the deadline (their requests did not finish). */
  cut: number;
}

const SHUTTING_DOWN = new HttpError(503, "temporarily_unavailable", "the gateway is shutting down; send the request again", { connection: "close", "retry-after": "1" });

export class ConnectionDrain {
  private draining = false;
  /**
   * Each open connection with the requests in flight on it (by response).
   * Kept per connection because node emits no `close` for a response still
   * queued behind another when the connection dies: such entries go with
   * their connection instead of piling up.
   */
  private readonly connections = new Map<Socket, Set<ServerResponse>>();
  private closed?: Promise<void>;
  private deadline?: NodeJS.Timeout;
  private deadlineAt = Infinity;
  private cutCount = 0;

  constructor(
    private readonly server: Server,
    listener: RequestListener,
  ) {
    server.on("connection", (socket: Socket) => {
      this.connections.set(socket, new Set());
      socket.once("close", () => this.connections.delete(socket));
    });
    server.on("request", (req: IncomingMessage, res: ServerResponse) => {
      const inFlight = this.connections.get(req.socket);
      if (inFlight) {
        inFlight.add(res);
        res.once("close", () => {
          inFlight.delete(res);
          // An answer that began before the drain kept its connection alive: close it now that it is idle.
          if (this.draining) setImmediate(() => server.closeIdleConnections());
        });
      }
      if (this.draining) {
        res.shouldKeepAlive = false;
        if (res.socket === null) return writeHttpError(res, SHUTTING_DOWN);
      }
      listener(req, res);
    });
  }

  /** Requests in flight (answers not finished), on every open connection. */
  get inFlight(): number {
    let n = 0;
    for (const responses of this.connections.values()) n += responses.size;
    return n;
  }

  /**
   * Starts the drain, or shortens one under way: connections still open
   * after `graceMs` are cut (held answers excepted). Resolves when the last
   * connection has closed.
   */
  async drain(graceMs: number): Promise<DrainReport> {
    if (!this.closed) {
      this.draining = true;
      // The last answer of each connection says Connection: close; answers before it (pipelined requests are
      // answered in order) keep the connection open, or the requests queued behind them would go unanswered.
      for (const inFlight of this.connections.values()) {
        const last = [...inFlight].pop();
        if (last && !last.headersSent) last.shouldKeepAlive = false;
      }
      this.closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
      this.server.closeIdleConnections();
    }
    const at = Date.now() + Math.max(0, graceMs);
    if (at < this.deadlineAt) {
      this.deadlineAt = at;
      clearTimeout(this.deadline);
      if (graceMs <= 0) this.cut();
      else this.deadline = setTimeout(() => this.cut(), graceMs);
    }
    await this.closed;
    clearTimeout(this.deadline);
    return { cut: this.cutCount };
  }

  private cut(): void {
    for (const [socket, inFlight] of this.connections) {
      if (socket.destroyed || [...inFlight].some(isAnswerHeld)) continue;
      this.cutCount++;
      socket.destroy();
    }
  }
}
