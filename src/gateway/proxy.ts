import { RESPONSE_ALREADY_SENT } from "@hono/node-server/utils/response";
import type { Handler } from "hono";
import http, { type IncomingMessage, type ServerResponse } from "node:http";
import https from "node:https";
import type { ForwardingRules } from "./forwarded-for.js";
import { HttpError } from "./http/http-error.js";
import type { CallerIdentity, GatewayEnv, ProductTarget } from "./http/middleware.js";
import { downstreamResponseHeaders, upstreamRequestHeaders } from "./proxy-headers.js";

/**
 * The product routes' handler: forwards the authenticated request to the
 * product's upstream and streams both bodies (pipe, no buffering) unless an
 * earlier middleware had to read the body (HMAC Digest), in which case those
 * bytes are sent. Upstream failures become 502, timeouts 504; a client that
 * goes away aborts the upstream request. It writes to node's response itself
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
  // Not an async function: the promise of forward() is the handler's answer.
  return (c) => {
    const product = c.get("product");
    const identity = c.get("identity");
    if (!product || !identity) throw new HttpError(500, "server_error", "proxy runs after routing and authentication");
    return forward(product, identity, c.get("body"), c.env.incoming, c.env.outgoing);
  };
}

/** The proxy on node's request and response, for the hono handler above and the HMAC fast path (hmac-fast-path.ts). */
export type UpstreamForwarder = (product: ProductTarget, identity: CallerIdentity, body: Buffer | undefined, req: IncomingMessage, res: ServerResponse) => Promise<Response>;

export function upstreamForwarder(forwarding: ForwardingRules): UpstreamForwarder {
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
  return (product, identity, body, req, res) => forward(product, originOf(product.upstream), identity, body, req, res, forwarding);
}

/**
 * Resolves with RESPONSE_ALREADY_SENT once the upstream's status and
 * headers are written (the body then streams on its own; a failure after
 * that can only cut the connection), or rejects with the HttpError to
 * answer when nothing was sent yet.
 */
function forward(
  product: ProductTarget,
  origin: Origin,
  identity: CallerIdentity,
  body: Buffer | undefined,
  req: IncomingMessage,
  res: ServerResponse,
  forwarding: ForwardingRules,
): Promise<Response> {
  return new Promise<Response>((resolve, reject) => {
    const forwarded = { for: forwarding.forwardedFor(req), proto: forwarding.isHttps(req) ? ("https" as const) : ("http" as const) };
    const headers = upstreamRequestHeaders(req.headers, identity, product.name, origin.host, forwarded, body?.length);
    const upstreamReq = origin.transport.request({
      protocol: origin.protocol,
      hostname: origin.hostname,
      port: origin.port,
      method: req.method,
      path: origin.basePath + product.upstreamTarget,
      headers,
      agent: origin.agent,
      timeout: product.timeoutMs,
    });
    let settled = false;
    const fail = (err: HttpError) => {
      if (res.writableEnded) return; // the whole answer was handed over: nothing left to stop
      upstreamReq.destroy();
      if (res.headersSent || res.destroyed) {
        res.destroy();
        if (!settled) resolve(RESPONSE_ALREADY_SENT);
      } else if (!settled) reject(err);
      settled = true;
    };
    upstreamReq.on("timeout", () => fail(new HttpError(504, "upstream_timeout", `${product.name} did not answer within ${product.timeoutMs} ms`)));
    upstreamReq.on("error", () => fail(new HttpError(502, "upstream_unavailable", `${product.name} could not be reached`)));
    upstreamReq.on("response", (upstreamRes) => {
      res.writeHead(upstreamRes.statusCode ?? 502, upstreamRes.statusMessage, downstreamResponseHeaders(upstreamRes.headers));
      upstreamRes.pipe(res);
      upstreamRes.on("error", () => fail(new HttpError(502, "upstream_unavailable", "upstream response broke off")));
      settled = true;
      resolve(RESPONSE_ALREADY_SENT);
    });
    // The caller went away before we finished answering: stop the upstream work too.
    res.on("close", () => {
      if (!res.writableFinished) fail(new HttpError(499, "client_closed", "client closed the connection"));
    });
    if (body) upstreamReq.end(body);
    else req.pipe(upstreamReq);
  });
}
