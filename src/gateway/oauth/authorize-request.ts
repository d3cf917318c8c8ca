import type { OAuthClientConfig } from "../config-schema.js";
import { formatScope, isSubset, parseScope } from "../scope-set.js";
import type { AuthRequest } from "./consent-csrf.js";
import { isValidChallenge } from "./pkce.js";

/**
 * Validates `GET /auth` (spec §4.1, RFC 6749 §4.1.1). Problems with the
 * client or the redirect URL are shown to the user (never redirected, so the
 * gateway is no open redirector); every other problem is sent back to the
 * client's registered redirect URL as `error=...` (RFC 6749 §4.1.2.1).
 */
export type AuthorizeCheck =
  | { kind: "ok"; client: OAuthClientConfig; request: AuthRequest; scopes: string[] }
  | { kind: "show"; title: string; detail: string }
  | { kind: "redirect"; location: string };

const MAX_STATE_LENGTH = 1024;

export function checkAuthorizeQuery(query: URLSearchParams, clients: ReadonlyMap<string, OAuthClientConfig>, issuer: string): AuthorizeCheck {
  for (const name of new Set(query.keys())) {
    if (query.getAll(name).length > 1) return { kind: "show", title: "Invalid request", detail: `The parameter ${name} appears more than once.` };
  }
  const clientId = query.get("client_id");
  const client = clientId ? clients.get(clientId) : undefined;
  if (!client) return { kind: "show", title: "Unknown application", detail: "The client_id is missing or not registered. Ask the application's developer." };
  const redirectUri = query.get("redirect_uri") ?? undefined;
  if (redirectUri !== undefined && redirectUri !== client.redirectUrl) {
    return { kind: "show", title: "Invalid redirect", detail: "redirect_uri does not match the URL registered for this application." };
  }
  const state = query.get("state") ?? undefined;
  const back = (error: string, description: string): AuthorizeCheck => ({
    kind: "redirect",
    location: redirectWith(client.redirectUrl, { error, error_description: description, state, iss: issuer }),
  });
  if (state !== undefined && state.length > MAX_STATE_LENGTH) return back("invalid_request", `state is longer than ${MAX_STATE_LENGTH} characters`);
  const responseType = query.get("response_type");
  if (!responseType) return back("invalid_request", "response_type is required");
  if (responseType !== "code") return back("unsupported_response_type", "only response_type=code is supported");
  const scopeText = query.get("scope");
  const scopes = scopeText ? parseScope(scopeText) : undefined;
  if (!scopes) return back("invalid_request", "scope is required");
  if (!isSubset(scopes, client.scopes)) return back("invalid_scope", "the application may not request one of these scopes");
  const codeChallenge = query.get("code_challenge") ?? undefined;
  const method = query.get("code_challenge_method") ?? undefined;
  if (codeChallenge === undefined) {
    if (method !== undefined) return back("invalid_request", "code_challenge_method was sent without code_challenge");
    if (!client.secretHash) return back("invalid_request", "this application is a public client and must use PKCE: send code_challenge and code_challenge_method=S256");
  } else {
    // RFC 7636 §4.3: a missing method means `plain`, which this server refuses (RFC 9700 §2.1.1).
    if (method !== "S256") return back("invalid_request", "code_challenge_method must be S256 (plain is not supported)");
    if (!isValidChallenge(codeChallenge)) return back("invalid_request", "code_challenge must be the 43-character base64url SHA-256 of the code_verifier");
  }
  const request: AuthRequest = { clientId: client.clientId, scope: formatScope(scopes), state, redirectUri, codeChallenge };
  return { kind: "ok", client, request, scopes };
}

/** The registered redirect URL with parameters added (its own query is kept). */
export function redirectWith(base: string, params: Record<string, string | undefined>): string {
  const url = new URL(base);
  for (const [name, value] of Object.entries(params)) if (value !== undefined) url.searchParams.set(name, value);
  return url.toString();
}
