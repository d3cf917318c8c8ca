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

export function proxy(forwarding: ForwardingRules): Handler<GatewayEnv> {
  return async (c) => {
    const product = c.get("product");
    const identity = c.get("identity");
    if (!product || !identity) throw new HttpError(500, "server_error", "proxy runs after routing and authentication");
    await forward(product, identity, c.get("body"), c.env.incoming, c.env.outgoing, forwarding);
    return RESPONSE_ALREADY_SENT;
  };
}

function forward(
  product: ProductTarget,
  identity: CallerIdentity,
  body: Buffer | undefined,
  req: IncomingMessage,
  res: ServerResponse,
  forwarding: ForwardingRules,
): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const base = product.upstream;
    const basePath = base.pathname.replace(/\/+$/, "");
    const headers = upstreamRequestHeaders(req.headers, identity, product.name, base.host, {
      for: forwarding.forwardedFor(req),
      proto: forwarding.isHttps(req) ? "https" : "http",
    });
    if (body) headers["content-length"] = body.length;
    const transport = base.protocol === "https:" ? https : http;
    const upstreamReq = transport.request({
      protocol: base.protocol,
      hostname: base.hostname,
      port: base.port,
      method: req.method,
      path: basePath + product.upstreamTarget,
      headers,
      agent: agents[base.protocol as "http:" | "https:"],
      timeout: product.timeoutMs,
    });
    let settled = false;
    const fail = (err: HttpError) => {
      if (settled) return;
      settled = true;
      upstreamReq.destroy();
      if (res.headersSent || res.destroyed) {
        res.destroy();
        resolve();
      } else reject(err);
    };
    upstreamReq.on("timeout", () => fail(new HttpError(504, "upstream_timeout", `${product.name} did not answer within ${product.timeoutMs} ms`)));
    upstreamReq.on("error", () => fail(new HttpError(502, "upstream_unavailable", `${product.name} could not be reached`)));
    upstreamReq.on("response", (upstreamRes) => {
      res.writeHead(upstreamRes.statusCode ?? 502, upstreamRes.statusMessage, downstreamResponseHeaders(upstreamRes.headers));
      upstreamRes.pipe(res);
      upstreamRes.on("error", () => fail(new HttpError(502, "upstream_unavailable", "upstream response broke off")));
      res.on("finish", () => {
        settled = true;
        resolve();
      });
    });
    // The caller went away before we finished answering: stop the upstream work too.
    res.on("close", () => {
      if (!res.writableFinished) fail(new HttpError(499, "client_closed", "client closed the connection"));
    });
    if (body) upstreamReq.end(body);
    else req.pipe(upstreamReq);
  });
}
