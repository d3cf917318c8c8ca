import { RESPONSE_ALREADY_SENT } from "@hono/node-server/utils/response";
import type { Handler } from "hono";
import http, { type IncomingMessage, type ServerResponse } from "node:http";
import https from "node:https";
import type { ForwardingRules } from "./forwarded-for.js";
import { HttpError } from "./http/http-error.js";
import type { CallerIdentity, GatewayEnv, ProductTarget } from "./http/middleware.js";
import { downstreamResponseHeaders, upstreamFraming, upstreamRequestHeaders, type UpstreamFraming } from "./proxy-headers.js";
import { deadlineTick, UpstreamDeadlines, type Watched } from "./upstream-deadlines.js";

/**
 * The product routes' handler: forwards the authenticated request to the
 * product's upstream and streams both bodies (pipe, no buffering) unless an
 * earlier middleware had to read the body (HMAC Digest), in which case those
 * bytes are sent. Upstream failures become 502, timeouts 504 (kept by one
 * sweep, upstream-deadlines.ts); a client that goes away aborts the
 * upstream request. It writes to node's response itself
 * (hono's escape hatch RESPONSE_ALREADY_SENT), so bodies stream both ways
 * without a Fetch API copy.
 */
const agents = {
  "http:": new http.Agent({ keepAlive: true, maxSockets: 256 }),
  "https:": new https.Agent({ keepAlive: true, maxSockets: 256 }),
};

/** What `http.request` needs of a product's upstream, read from its URL once, not on every request. */
interface Origin {
  protocol: "http:" | "https:";
  hostname: string;
  port: string;
  host: string;
  basePath: string;
  transport: typeof http | typeof https;
  agent: http.Agent;
}

export function proxy(forward: UpstreamForwarder): Handler<GatewayEnv> {
  return (c) => {
    const product = c.get("product");
    const identity = c.get("identity");
    if (!product || !identity) throw new HttpError(500, "server_error", "proxy runs after routing and authentication");
    return new Promise<Response>((resolve, reject) =>
      forward(product, identity, c.get("body"), c.env.incoming, c.env.outgoing, (err) => (err ? reject(err) : resolve(RESPONSE_ALREADY_SENT))),
    );
  };
}

/**
 * The proxy on node's request and response, for the hono handler above and
 * the HMAC fast path (hmac-fast-path.ts). `done` is called once: with no
 * error when the upstream's status and headers have been written to the
 * caller (the body then streams on its own; a failure after that can only
 * cut the connection) or the caller is gone, or with the HttpError to
 * answer when nothing was sent yet.
 */
export type UpstreamForwarder = (product: ProductTarget, identity: CallerIdentity, body: Buffer | undefined, req: IncomingMessage, res: ServerResponse, done: ForwardDone) => void;
export type ForwardDone = (err: HttpError | undefined, req: IncomingMessage, res: ServerResponse) => void;

/** `timeoutsMs`: every product's timeoutMs, for the period of the timeout sweep (upstream-deadlines.ts). */
export function upstreamForwarder(forwarding: ForwardingRules, timeoutsMs: Iterable<number>): UpstreamForwarder {
  const deadlines = new UpstreamDeadlines(deadlineTick(timeoutsMs));
  const origins = new WeakMap<URL, Origin>();
  const originOf = (url: URL): Origin => {
    let origin = origins.get(url);
    if (!origin) {
      const protocol = url.protocol === "https:" ? "https:" : "http:";
      origin = {
        protocol,
        hostname: url.hostname,
        port: url.port,
        host: url.host,
        basePath: url.pathname.replace(/\/+$/, ""),
        transport: protocol === "https:" ? https : http,
        agent: agents[protocol],
      };
      origins.set(url, origin);
    }
    return origin;
  };
  return (product, identity, body, req, res, done) => {
    const origin = originOf(product.upstream);
    const forwarded = { for: forwarding.forwardedFor(req), proto: forwarding.isHttps(req) ? ("https" as const) : ("http" as const) };
    const framing = upstreamFraming(req.headers, body);
    const upstreamReq = origin.transport.request({
      protocol: origin.protocol,
      hostname: origin.hostname,
      port: origin.port,
      method: req.method,
      path: origin.basePath + product.upstreamTarget,
      headers: upstreamRequestHeaders(req.headers, identity, product.name, origin.host, forwarded, framing),
      agent: origin.agent,
    });
    new Exchange(product, req, res, upstreamReq, deadlines, done).start(body, framing);
  };
}

/** One proxied request: the upstream request, its deadline, and the one answer to `done`. */
class Exchange implements Watched {
  deadlineSlot = -1;
  deadlineMoved = 0;
  deadlineIdleSince = 0;
  private settled = false;
  private upstreamRes: IncomingMessage | undefined;

  constructor(
    private readonly product: ProductTarget,
    private readonly req: IncomingMessage,
    private readonly res: ServerResponse,
    private readonly upstreamReq: http.ClientRequest,
    private readonly deadlines: UpstreamDeadlines,
    private readonly done: ForwardDone,
  ) {}

  get timeoutMs(): number {
    return this.product.timeoutMs;
  }

  start(body: Buffer | undefined, framing: UpstreamFraming): void {
    const { req, res, upstreamReq } = this;
    this.deadlines.watch(this);
    upstreamReq.on("error", () => this.fail(new HttpError(502, "upstream_unavailable", `${this.product.name} could not be reached`)));
    upstreamReq.on("response", (upstreamRes) => {
      this.upstreamRes = upstreamRes;
      res.writeHead(upstreamRes.statusCode ?? 502, upstreamRes.statusMessage, downstreamResponseHeaders(upstreamRes.rawHeaders));
      upstreamRes.pipe(res);
      upstreamRes.on("error", () => this.fail(new HttpError(502, "upstream_unavailable", "upstream response broke off")));
      this.settle(undefined);
    });
    // The caller went away before we finished answering: stop the upstream work too.
    res.on("close", () => {
      this.deadlines.unwatch(this);
      if (!res.writableFinished) this.fail(new HttpError(499, "client_closed", "client closed the connection"));
    });
    // The bytes sent are exactly those the framing announced (proxy-headers.ts upstreamFraming).
    if (body) upstreamReq.end(body);
    // No body (RFC 9112 §6.3): the upstream request is complete now, with no pipe to set up and take down.
    else if (framing.kind === "none") upstreamReq.end();
    else req.pipe(upstreamReq);
  }

  bytesMoved(): number {
    const socket = this.upstreamReq.socket;
    return socket ? socket.bytesRead + socket.bytesWritten : 0;
  }

  finished(): boolean {
    return this.upstreamRes?.complete === true || this.res.writableEnded;
  }

  expire(): void {
    this.fail(new HttpError(504, "upstream_timeout", `${this.product.name} did not answer within ${this.product.timeoutMs} ms`));
  }

  private fail(err: HttpError): void {
    const { res } = this;
    if (res.writableEnded) return; // the whole answer was handed over: nothing left to stop
    this.deadlines.unwatch(this);
    this.upstreamReq.destroy();
    if (res.headersSent || res.destroyed) {
      res.destroy();
      this.settle(undefined);
    } else {
      this.settle(err);
    }
  }

  private settle(err: HttpError | undefined): void {
    if (this.settled) return;
    this.settled = true;
    this.done(err, this.req, this.res);
  }
}
