import type { IncomingMessage, ServerResponse } from "node:http";

/**
 * Hono-style middleware: each function does one job, then either calls
 * `next()` or throws an HttpError. The state object carries what earlier
 * middleware learned (product, caller identity, buffered body).
 */
export type CallerIdentity =
  | { kind: "user"; username: string; clientId: string; scopes: string[] }
  | { kind: "company"; company: string; clientId: string; product: string };

export interface ProductTarget {
  name: string;
  upstream: URL;
  auth: readonly ("bearer" | "hmac")[];
  timeoutMs: number;
  /** Path and query to send upstream: the request target without `/v2/<product>`. */
  upstreamTarget: string;
}

export interface GatewayContext {
  req: IncomingMessage;
  res: ServerResponse;
  /** Request time from the injected clock, read once per request. */
  now: Date;
  product?: ProductTarget;
  identity?: CallerIdentity;
  /** Set when a middleware had to read the body (HMAC Digest); otherwise the body is streamed. */
  body?: Buffer;
}

export type Middleware = (ctx: GatewayContext, next: () => Promise<void>) => Promise<void>;

export function compose(middleware: readonly Middleware[]): Middleware {
  return (ctx, next) => {
    const run = (i: number): Promise<void> => {
      const fn = i < middleware.length ? middleware[i] : undefined;
      return fn ? fn(ctx, () => run(i + 1)) : next();
    };
    return run(0);
  };
}

/** Lower-cases and flattens node's header object into name → single value. */
export function flatHeaders(req: IncomingMessage): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(req.headers)) {
    if (value !== undefined) out[name.toLowerCase()] = Array.isArray(value) ? value.join(", ") : value;
  }
  return out;
}
