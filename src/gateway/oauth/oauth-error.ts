import type { Context } from "hono";
import type { GatewayEnv } from "../http/middleware.js";
import { jsonResponse } from "../http/respond.js";

/**
 * Token endpoint errors, RFC 6749 §5.2: status 400, except invalid_client
 * which is 401 with a Basic challenge (RFC 6749 §5.2 allows it either way).
 */
export type OAuthErrorCode =
  | "invalid_request"
  | "invalid_client"
  | "invalid_grant"
  | "invalid_scope"
  | "unauthorized_client"
  | "unsupported_grant_type"
  | "unsupported_token_type";

export class OAuthError extends Error {
  constructor(
    readonly error: OAuthErrorCode,
    readonly description: string,
  ) {
    super(`${error}: ${description}`);
    this.name = "OAuthError";
  }

  get status(): number {
    return this.error === "invalid_client" ? 401 : 400;
  }
}

export function oauthErrorResponse(c: Context<GatewayEnv>, err: OAuthError): Response {
  const headers: Record<string, string> = { "cache-control": "no-store", pragma: "no-cache" };
  if (err.error === "invalid_client") headers["www-authenticate"] = 'Basic realm="relcast", charset="UTF-8"';
  return jsonResponse(c, err.status, { error: err.error, error_description: err.description }, headers);
}
