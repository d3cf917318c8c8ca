import type { Context } from "hono";
import { HttpError } from "../http/http-error.js";
import type { GatewayEnv } from "../http/middleware.js";
import { readBoundedBody } from "../http/read-body.js";
import { OAuthError } from "./oauth-error.js";

/**
 * Reads the token request parameters: JSON (spec §4.2) or form encoding
 * (what RFC 6749 clients send). Every value must be a single string.
 */
export async function readTokenParams(c: Context<GatewayEnv>, limit: number): Promise<Map<string, string>> {
  const type = (c.req.header("content-type") ?? "").split(";")[0]!.trim().toLowerCase();
  if (type !== "application/json" && type !== "application/x-www-form-urlencoded") {
    throw new OAuthError("invalid_request", "Content-Type must be application/json or application/x-www-form-urlencoded");
  }
  let body: Buffer;
  try {
    body = await readBoundedBody(c, limit);
  } catch (err) {
    if (err instanceof HttpError) throw new OAuthError("invalid_request", err.description);
    throw err;
  }
  return type === "application/json" ? jsonParams(body) : formParams(body);
}

function jsonParams(body: Buffer): Map<string, string> {
  let raw: unknown;
  try {
    raw = JSON.parse(body.toString("utf8"));
  } catch {
    throw new OAuthError("invalid_request", "body is not valid JSON");
  }
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) throw new OAuthError("invalid_request", "body must be a JSON object");
  const params = new Map<string, string>();
  for (const [key, value] of Object.entries(raw)) {
    if (value === null || value === undefined) continue;
    if (typeof value !== "string") throw new OAuthError("invalid_request", `parameter ${key} must be a string`);
    params.set(key, value);
  }
  return params;
}

function formParams(body: Buffer): Map<string, string> {
  const params = new Map<string, string>();
  for (const [key, value] of new URLSearchParams(body.toString("utf8"))) {
    if (params.has(key)) throw new OAuthError("invalid_request", `parameter ${key} is repeated`);
    params.set(key, value);
  }
  return params;
}

export interface ClientCredentials {
  clientId: string;
  /** Absent when a public client identifies itself by client_id alone. */
  clientSecret?: string;
  viaBasic: boolean;
}

/** Client credentials from the body (spec §4.2) or HTTP Basic (RFC 6749 §2.3.1); never both. A public client sends only client_id. */
export function clientCredentials(params: Map<string, string>, authorization: string | undefined): ClientCredentials {
  const basic = authorization && /^basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(authorization);
  if (authorization && !basic) throw new OAuthError("invalid_client", "unsupported Authorization scheme on the token endpoint");
  if (basic) {
    if (params.has("client_secret")) throw new OAuthError("invalid_request", "send client credentials in one place only");
    const decoded = Buffer.from(basic[1]!, "base64").toString("utf8");
    const colon = decoded.indexOf(":");
    if (colon < 0) throw new OAuthError("invalid_client", "malformed Basic credentials");
    const clientId = safeDecode(decoded.slice(0, colon));
    const clientSecret = safeDecode(decoded.slice(colon + 1));
    if (params.has("client_id") && params.get("client_id") !== clientId) throw new OAuthError("invalid_request", "client_id differs from the Basic credentials");
    return { clientId, clientSecret, viaBasic: true };
  }
  const clientId = params.get("client_id");
  const clientSecret = params.get("client_secret");
  if (!clientId) throw new OAuthError("invalid_client", "client_id is required (with client_secret, unless the client is public)");
  return { clientId, clientSecret: clientSecret || undefined, viaBasic: false };
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text.replace(/\+/g, " "));
  } catch {
    throw new OAuthError("invalid_client", "malformed Basic credentials");
  }
}
