import type { ServerResponse } from "node:http";
import { sendJson } from "../http/respond.js";

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
  | "unsupported_grant_type";

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

export function sendOAuthError(res: ServerResponse, err: OAuthError): void {
  const headers: Record<string, string> = { "cache-control": "no-store", pragma: "no-cache" };
  if (err.error === "invalid_client") headers["www-authenticate"] = 'Basic realm="relcast", charset="UTF-8"';
  sendJson(res, err.status, { error: err.error, error_description: err.description }, headers);
}
