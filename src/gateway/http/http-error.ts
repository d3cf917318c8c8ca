import type { Context } from "hono";
import type { ServerResponse } from "node:http";
import type { GatewayEnv } from "./middleware.js";
import { jsonResponse } from "./respond.js";

/**
 * A rejection raised by a middleware. The app's error handler turns it into
 * the one error body of the product routes: `{ "error": <code>,
 * "error_description": <text> }` (the RFC 6749/6750 shape), plus any `extra`
 * fields.
 */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly error: string,
    readonly description: string,
    readonly headers: Record<string, string | string[]> = {},
    readonly extra: Record<string, unknown> = {},
  ) {
    super(`${status} ${error}: ${description}`);
    this.name = "HttpError";
  }
}

export function httpErrorResponse(c: Context<GatewayEnv>, err: HttpError): Response {
  return jsonResponse(c, err.status, { error: err.error, error_description: err.description, ...err.extra }, { "cache-control": "no-store", ...err.headers });
}

/**
 * The same answer written to node's response directly, for the HMAC fast
 * path (hmac-fast-path.ts), byte for byte what hono and its node adapter
 * write for httpErrorResponse: the headers in the Fetch API's order (by
 * name, repeated values joined), then Content-Length.
 */
export function writeHttpError(outgoing: ServerResponse, err: HttpError): void {
  const body = JSON.stringify({ error: err.error, error_description: err.description, ...err.extra });
  const headers = new Map<string, string>([["cache-control", "no-store"]]);
  for (const [name, value] of Object.entries(err.headers)) headers.set(name.toLowerCase(), Array.isArray(value) ? value.join(", ") : value);
  headers.set("content-type", "application/json");
  const list = [...headers].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).flat();
  outgoing.writeHead(err.status, [...list, "Content-Length", String(Buffer.byteLength(body))]);
  outgoing.end(body);
}
