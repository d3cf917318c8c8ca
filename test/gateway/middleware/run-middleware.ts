import type { HttpBindings } from "@hono/node-server";
import { Hono } from "hono";
import type { IncomingMessage, ServerResponse } from "node:http";
import { HttpError } from "../../../src/gateway/http/http-error.js";
import type { GatewayEnv, GatewayVariables, Middleware } from "../../../src/gateway/http/middleware.js";

/**
 * Runs one middleware inside a hono app on a fake node request; reports
 * whether next() ran or which HttpError was thrown, and the context
 * variables the middleware left behind.
 */
export async function runMiddleware(
  mw: Middleware,
  req: { method?: string; url?: string; headers?: Record<string, string> },
  ctxPatch: Partial<GatewayVariables> = {},
): Promise<{ passed: boolean; error?: HttpError; ctx: Partial<GatewayVariables>; headers: Record<string, unknown> }> {
  const headers: Record<string, unknown> = {};
  const method = req.method ?? "GET";
  const url = req.url ?? "/";
  const incoming = { method, url, headers: req.headers ?? {}, socket: {} } as unknown as IncomingMessage;
  const outgoing = { setHeader: (n: string, v: unknown) => (headers[n] = v) } as unknown as ServerResponse;
  let passed = false;
  let error: HttpError | undefined;
  let ctx: Partial<GatewayVariables> = {};
  const app = new Hono<GatewayEnv>();
  app.use(async (c, next) => {
    c.set("now", new Date("2025-03-01T10:00:00Z"));
    for (const [k, v] of Object.entries(ctxPatch)) c.set(k as keyof GatewayVariables, v as never);
    try {
      await next();
    } finally {
      ctx = { now: c.get("now"), product: c.get("product"), identity: c.get("identity"), body: c.get("body") };
    }
  });
  app.all("*", mw, (c) => {
    passed = true;
    return c.body(null, 204);
  });
  app.onError((err, c) => {
    if (!(err instanceof HttpError)) throw err;
    error = err;
    return c.body(null, 500);
  });
  // The Fetch API URL is only for routing; middleware read the raw target from `incoming`.
  const fetchUrl = url.startsWith("/") ? `http://gateway.test${url.replace(/\\/g, "/")}` : "http://gateway.test/";
  await app.request(fetchUrl, { method, headers: req.headers }, { incoming, outgoing } satisfies HttpBindings);
  return { passed, error, ctx, headers };
}
