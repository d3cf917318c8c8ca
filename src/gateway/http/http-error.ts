import type { Context } from "hono";
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
