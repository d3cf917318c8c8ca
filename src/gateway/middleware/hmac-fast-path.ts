import type { Context, Handler } from "hono";
import type { GatewayEnv, Middleware } from "../http/middleware.js";
import { hasBody } from "../http/read-body.js";
import { authScheme } from "./authenticate.js";
import { checkDateSkew } from "./date-skew.js";
import { checkProductAccess } from "./scope.js";

/**
 * The product routes' common case, an HMAC request without a body, as one
 * step: the same checks as the general chain (product route, scheme, Date
 * skew, signature, product access), in the same order, then the proxy;
 * synchronous up to the proxy, so no promise, closure or context lookup per
 * check. Anything else (Bearer, a body to read for the Digest, a verifier
 * that answers with a promise) goes on to the general chain. It is the
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
  return async (c, next) => {
    const authorization = c.env.incoming.headers.authorization;
    if (authorization === undefined || !/^\s*hmac\s/i.test(authorization) || hasBody(c.env.incoming)) return next();
    resolveProduct(c);
    if (authScheme(c) !== "hmac") return next();
    checkDateSkew(c, maxSkewSeconds);
    const pending = checkHmac(c);
    if (pending) await pending;
    checkProductAccess(c);
    return proxy(c, next);
  };
}
