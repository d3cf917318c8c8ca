import { randomBytes } from "node:crypto";

/**
 * Builds the URL the application sends the user's browser to (`GET {auth_url}/auth`, docs/gateway.md).
 * `state` is echoed back on the redirect; compare it with the one you
 * stored to reject forged redirects (RFC 6749 §10.12).
 */
export interface AuthorizationUrlInput {
  /** `{auth_url}`, for example https://auth.example.com */
  authUrl: string;
  clientId: string;
  scope: string | readonly string[];
  state?: string;
  /** Optional; when sent it must equal the registered URL and be repeated in the code exchange. */
  redirectUri?: string;
}

export function buildAuthorizationUrl(input: AuthorizationUrlInput): string {
  const url = new URL(input.authUrl.replace(/\/+$/, "") + "/auth");
  url.searchParams.set("client_id", input.clientId);
  url.searchParams.set("response_type", "code");
  url.searchParams.set("scope", typeof input.scope === "string" ? input.scope : input.scope.join(" "));
  if (input.state !== undefined) url.searchParams.set("state", input.state);
  if (input.redirectUri !== undefined) url.searchParams.set("redirect_uri", input.redirectUri);
  return url.toString();
}

export function newState(): string {
  return randomBytes(16).toString("base64url");
}

/** Reads `code` (or the error) from the redirect the browser landed on, checking `state`. */
export function readRedirect(redirectedTo: string, expectedState?: string): { code: string } | { error: string; description?: string } {
  const params = new URL(redirectedTo).searchParams;
  if (expectedState !== undefined && params.get("state") !== expectedState) return { error: "state_mismatch" };
  const error = params.get("error");
  if (error) return { error, description: params.get("error_description") ?? undefined };
  const code = params.get("code");
  return code ? { code } : { error: "missing_code" };
}
