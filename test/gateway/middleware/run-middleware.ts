import type { IncomingMessage, ServerResponse } from "node:http";
import { HttpError } from "../../../src/gateway/http/http-error.js";
import type { GatewayContext, Middleware } from "../../../src/gateway/http/middleware.js";

/** Runs one middleware on a fake request; reports whether next() ran or which HttpError was thrown. */
export async function runMiddleware(
  mw: Middleware,
  req: { method?: string; url?: string; headers?: Record<string, string> },
  ctxPatch: Partial<GatewayContext> = {},
): Promise<{ passed: boolean; error?: HttpError; ctx: GatewayContext; headers: Record<string, unknown> }> {
  const headers: Record<string, unknown> = {};
  const res = { setHeader: (n: string, v: unknown) => (headers[n] = v) } as unknown as ServerResponse;
  const ctx: GatewayContext = {
    req: { method: "GET", url: "/", headers: {}, ...req } as unknown as IncomingMessage,
    res,
    now: new Date("2025-03-01T10:00:00Z"),
    ...ctxPatch,
  };
  let passed = false;
  try {
    await mw(ctx, async () => {
      passed = true;
    });
  } catch (err) {
    if (err instanceof HttpError) return { passed, error: err, ctx, headers };
    throw err;
  }
  return { passed, ctx, headers };
}
