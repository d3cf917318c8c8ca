import type { IncomingMessage, RequestListener, ServerResponse } from "node:http";
import type { Clock } from "./clock.js";
import type { ProductTarget } from "./http/middleware.js";
import { hasBody } from "./http/read-body.js";
import { checkDateSkew } from "./middleware/date-skew.js";
import { markDeprecatedRequestLine, type HmacCaller } from "./middleware/hmac-auth.js";
import { acceptedOnce } from "./middleware/replay-guard.js";
import { checkProductAccess } from "./middleware/scope.js";
import type { ForwardDone, UpstreamForwarder } from "./proxy.js";

/**
 * The product routes' common case, an HMAC GET, HEAD or OPTIONS without a
 * body, served before hono (docs/gateway.md, "The HMAC fast path"). Other
 * methods are accepted once (middleware/replay-guard.ts, a database write)
 * and always take hono's chain, which records their signature.
 *
 * It takes a request only when every check hono's chain would run on it
 * passes: the global guards (repeated headers, dot segments), the product
 * route, the HMAC scheme on a product that takes it, the Date skew, the
 * signature, the product access; and only when hono would route it to
 * `/v2/*` at all. Then it proxies it, as the route's last handler would.
 * Every other request, including every one that fails a check, goes to
 * hono untouched: its chain runs the checks again and gives the answer it
 * always gave. So routing, every error answer, body limits and the other
 * routes stay hono's; what the fast path saves is hono's per-request
 * Request, Context and Response objects and the promise steps of its
 * composition and of the node adapter, about 15 µs of CPU per proxied
 * request.
 */
export interface HmacFastPathOptions {
  clock: Clock;
  /** The checks of every route (server.ts requestChecks); throw an HttpError. */
  requestChecks: (incoming: IncomingMessage) => void;
  resolveProduct: (incoming: IncomingMessage) => ProductTarget;
  maxSkewSeconds: number;
  checkHmac: (incoming: IncomingMessage, now: Date, body: undefined) => HmacCaller | Promise<HmacCaller>;
  forward: UpstreamForwarder;
  /** The access log of a request the fast path takes (server.ts logWhenFinished), when it is on. */
  logRequest?: (incoming: IncomingMessage, outgoing: ServerResponse) => void;
  /** The answer to a failure of the proxy itself (an unreachable upstream, a timeout), as hono's error handler gives it. */
  answerError: (incoming: IncomingMessage, outgoing: ServerResponse, err: unknown) => void;
}

/** node's request listener: the fast path for the requests it takes, `general` (hono) for all others. */
export function hmacFastPath(options: HmacFastPathOptions, general: RequestListener): RequestListener {
  const { clock, requestChecks, resolveProduct, maxSkewSeconds, checkHmac, forward, logRequest, answerError } = options;
  const forwarded: ForwardDone = (err, req, res) => {
    if (err) answerError(req, res, err);
  };
  const proxy = (req: IncomingMessage, res: ServerResponse, product: ProductTarget, caller: HmacCaller) => {
    // Never forward a request whose signature must be recorded first (isFastPathRequest already leaves those to hono).
    if (caller.replaySignature !== undefined) return general(req, res);
    try {
      checkProductAccess(product, caller.identity, req.method ?? "GET");
    } catch {
      return general(req, res);
    }
    logRequest?.(req, res);
    markDeprecatedRequestLine(res, caller);
    forward(product, caller.identity, undefined, req, res, forwarded);
  };
  return (req, res) => {
    if (!isFastPathRequest(req)) return general(req, res);
    let product: ProductTarget;
    let caller: HmacCaller | Promise<HmacCaller>;
    try {
      const now = clock();
      requestChecks(req);
      product = resolveProduct(req);
      if (!product.auth.includes("hmac")) return general(req, res);
      checkDateSkew(req, now, maxSkewSeconds);
      caller = checkHmac(req, now, undefined);
    } catch {
      return general(req, res);
    }
    if (caller instanceof Promise) {
      caller.then((verified) => proxy(req, res, product, verified), () => general(req, res));
    } else {
      proxy(req, res, product, caller);
    }
  };
}

/**
 * A request for the fast path to try: a method that may be repeated, an
 * HMAC Authorization, no body, a `/v2/` target (origin form) and a Host
 * header that @hono/node-server turns into the URL hono routes by (see
 * adapterTakesHost).
 */
function isFastPathRequest(req: IncomingMessage): boolean {
  const { url, headers } = req;
  return (
    !acceptedOnce(req.method) &&
    url !== undefined &&
    url.startsWith("/v2/") &&
    headers.authorization !== undefined &&
    isHmacScheme(headers.authorization) &&
    !hasBody(req) &&
    headers.host !== undefined &&
    adapterTakesHost(headers.host, url)
  );
}

/**
 * Whether @hono/node-server (2.x, `buildUrl` in its request listener)
 * makes a URL of this Host and target rather than refusing the request
 * (which start-gateway.ts answers with a 400): a plain lower-case host with
 * a port from 1000 to 59999, or none, and a plain path are used as they
 * are; anything else it parses as a URL, and refuses one that does not
 * parse, has a backslash in the path, or names another host. The fast path
 * must take no request the adapter refuses; it may leave to hono some that
 * the adapter takes (it is stricter here).
 */
const PLAIN_HOST = /^[a-z0-9._-]+(?::(?:[1-5]\d{3,4}|[6-9]\d{3}))?$/;
const PLAIN_TARGET = /^\/[!#$&-;=?-[\]_a-z~]*$/;
const DOT_SEGMENT = /\/\.\.?(?:[/?#]|$)/;

function adapterTakesHost(host: string, target: string): boolean {
  if (PLAIN_HOST.test(host) && PLAIN_TARGET.test(target) && !DOT_SEGMENT.test(target)) return true;
  const backslash = target.indexOf("\\");
  if (backslash >= 0) return false;
  try {
    const url = new URL(`http://${host}${target}`);
    const hostname = (host.includes(":") ? host.replace(/:\d+$/, "") : host).toLowerCase();
    return (url.hostname.length === host.length || url.hostname === hostname) && url.pathname.startsWith("/v2/");
  } catch {
    return false;
  }
}

/** `hmac` then whitespace, after optional leading whitespace, in any case (what authenticate.ts reads as the hmac scheme, without a regex per request). */
function isHmacScheme(value: string): boolean {
  let i = 0;
  while (i < value.length && isSpace(value.charCodeAt(i))) i++;
  return (
    value.length > i + 4 &&
    (value.charCodeAt(i) | 0x20) === 0x68 && // h
    (value.charCodeAt(i + 1) | 0x20) === 0x6d && // m
    (value.charCodeAt(i + 2) | 0x20) === 0x61 && // a
    (value.charCodeAt(i + 3) | 0x20) === 0x63 && // c
    isSpace(value.charCodeAt(i + 4))
  );
}

function isSpace(code: number): boolean {
  return code === 0x20 || code === 0x09;
}
