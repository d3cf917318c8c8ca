import type { Context, Handler, Next } from "hono";
import type { GatewayEnv, Middleware } from "../http/middleware.js";
import { hasBody } from "../http/read-body.js";
import { checkDateSkew } from "./date-skew.js";
import { checkProductAccess } from "./scope.js";

/**
 * The product routes' common case, an HMAC request without a body, as one
 * step: the same checks as the general chain (product route, scheme, Date
 * skew, signature, product access), in the same order, then the proxy;
 * synchronous up to the proxy, so no promise, closure or context lookup per
 * check (a verifier that answers with a promise is waited for). Anything
 * else (Bearer, a body to read for the Digest, a product that does not take
 * HMAC) goes on to the general chain. It is the
 * first handler of the `/v2/*` route, so routing, the global middleware and
 * the error handler are still hono's.
 */
export interface HmacFastPathOptions {
  resolveProduct: (c: Context<GatewayEnv>) => void;
  checkHmac: (c: Context<GatewayEnv>) => void | Promise<void>;
  maxSkewSeconds: number;
  proxy: Handler<GatewayEnv>;
}

export function hmacFastPath(options: HmacFastPathOptions): Middleware {
  const { resolveProduct, checkHmac, maxSkewSeconds, proxy } = options;
  const accepted = (c: Context<GatewayEnv>, next: Next) => {
    checkProductAccess(c);
    return proxy(c, next) as Promise<Response>;
  };
  // Not an async function: the checks throw synchronously (hono's compose
  // turns that into the error handler's answer, as for a rejection), and
  // the proxy's promise is handed back as it is.
  return (c, next) => {
    const incoming = c.env.incoming;
    const authorization = incoming.headers.authorization;
    if (authorization === undefined || !isHmacScheme(authorization) || hasBody(incoming)) return next();
    resolveProduct(c);
    // The scheme is hmac (checked above); a product that does not take it gets authenticate's 401 from the general chain.
    if (!c.get("product")!.auth.includes("hmac")) return next();
    checkDateSkew(c, maxSkewSeconds);
    const pending = checkHmac(c);
    return pending ? pending.then(() => accepted(c, next)) : accepted(c, next);
  };
}

/** `hmac` then whitespace, after optional leading whitespace, in any case (what `^\s*hmac\s` matched, without a regex per request). */
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
