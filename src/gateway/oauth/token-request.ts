import type { Context } from "hono";
import { HttpError } from "../http/http-error.js";
import type { GatewayEnv } from "../http/middleware.js";
import { readBoundedBody } from "../http/read-body.js";
import { parseStrictJson } from "../../core/strict-json.js";
import { OAuthError } from "./oauth-error.js";

/**
 * Reads the token request parameters: JSON (spec §4.2) or form encoding
 * (what RFC 6749 clients send). Both encodings must say one thing: every
 * parameter once (RFC 6749 §3.1), as a string, in valid UTF-8. JSON is read
 * by core/strict-json (duplicate keys at any depth, in any escape spelling,
 * refused); a form by percent-decoding that refuses what URLSearchParams
 * would turn into U+FFFD. Every refusal is `invalid_request`.
 */
export async function readTokenParams(c: Context<GatewayEnv>, limit: number): Promise<Map<string, string>> {
  const [mediaType, ...parameters] = (c.req.header("content-type") ?? "").split(";");
  const type = mediaType!.trim().toLowerCase();
  if (type !== "application/json" && type !== "application/x-www-form-urlencoded") {
    throw new OAuthError("invalid_request", "Content-Type must be application/json or application/x-www-form-urlencoded");
  }
  // Every charset parameter must say UTF-8: a second one naming another charset is refused, not outvoted.
  for (const parameter of parameters) {
    const charset = /^\s*charset\s*=\s*"?([^"]*)"?\s*$/i.exec(parameter)?.[1];
    // "utf8" is a WHATWG label of UTF-8 too.
    if (charset !== undefined && !/^utf-?8$/i.test(charset)) {
      throw new OAuthError("invalid_request", `charset ${JSON.stringify(charset)} is not supported; send the body as UTF-8`);
    }
  }
  let body: Buffer;
  try {
    body = await readBoundedBody(c, limit);
  } catch (err) {
    if (err instanceof HttpError) throw new OAuthError("invalid_request", err.description);
    throw err;
  }
  let text: string;
  try {
    text = UTF8.decode(body);
  } catch {
    throw new OAuthError("invalid_request", "body is not valid UTF-8");
  }
  return type === "application/json" ? jsonParams(text) : formParams(text);
}

/** Refuses invalid bytes instead of reading them as U+FFFD; keeps a BOM, which the JSON reader then refuses (RFC 8259 §8.1). */
const UTF8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

function jsonParams(text: string): Map<string, string> {
  const parsed = parseStrictJson(text);
  if (!parsed.ok) throw new OAuthError("invalid_request", `body is not strict JSON: it ${parsed.reason}`);
  const raw = parsed.value;
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) throw new OAuthError("invalid_request", "body must be a JSON object");
  const params = new Map<string, string>();
  for (const [key, value] of Object.entries(raw)) {
    // RFC 6749 §3.1: a parameter sent without a value is treated as omitted; null is JSON's spelling of that.
    if (value === null) continue;
    if (typeof value !== "string") throw new OAuthError("invalid_request", `parameter ${key} must be a string`);
    params.set(key, value);
  }
  return params;
}

function formParams(text: string): Map<string, string> {
  const params = new Map<string, string>();
  for (const pair of text.split("&")) {
    if (pair === "") continue;
    const eq = pair.indexOf("=");
    const key = formDecode(eq < 0 ? pair : pair.slice(0, eq), "a parameter name");
    const value = formDecode(eq < 0 ? "" : pair.slice(eq + 1), `the value of parameter ${key}`);
    if (params.has(key)) throw new OAuthError("invalid_request", `parameter ${key} is repeated`);
    if (key === "__proto__") throw new OAuthError("invalid_request", "parameter __proto__ is not allowed");
    params.set(key, value);
  }
  return params;
}

/** application/x-www-form-urlencoded decoding, but a malformed escape or one that is not UTF-8 is refused, not kept or replaced. */
function formDecode(text: string, what: string): string {
  try {
    return decodeURIComponent(text.replace(/\+/g, " "));
  } catch {
    // The text itself is not repeated: it may be a secret.
    throw new OAuthError("invalid_request", `${what} is not valid percent-encoded UTF-8`);
  }
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
    let decoded: string;
    try {
      decoded = UTF8.decode(Buffer.from(basic[1]!, "base64"));
    } catch {
      throw new OAuthError("invalid_client", "malformed Basic credentials (not UTF-8)");
    }
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
