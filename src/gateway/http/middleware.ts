import type { HttpBindings } from "@hono/node-server";
import type { MiddlewareHandler } from "hono";
import type { IncomingMessage } from "node:http";

/**
 * The gateway runs on hono (`@hono/node-server`). Each concern is one hono
 * middleware that either calls `next()` or throws an HttpError; what earlier
 * middleware learned travels in the context variables below. The node
 * request (`c.env.incoming`) is kept for what the Fetch API view normalises
 * away: the raw request target, repeated headers, and the body stream the
 * proxy pipes.
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

export interface GatewayVariables {
  /** Request time from the injected clock, read once per request. */
  now: Date;
  product?: ProductTarget;
  identity?: CallerIdentity;
  /** Set when a middleware had to read the body (HMAC Digest); otherwise the body is streamed. */
  body?: Buffer;
  /** The signature of an HMAC request accepted only once (a non-safe method), for replay-guard.ts to record. */
  replaySignature?: string;
}

export interface GatewayEnv {
  Bindings: HttpBindings;
  Variables: GatewayVariables;
}

export type Middleware = MiddlewareHandler<GatewayEnv>;

/** The request target exactly as the client sent it (hono's URL view resolves `..` and `.`). */
export function rawTarget(req: IncomingMessage): string {
  return req.url ?? "/";
}
