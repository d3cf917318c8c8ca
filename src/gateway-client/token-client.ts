import { registerSecret } from "../core/secrets.js";

/** Calls to `POST {auth_url}/auth/oauth2/token` (the code and refresh grants, docs/gateway.md). */
export interface TokenSet {
  accessToken: string;
  refreshToken: string;
  /** When the access token expires, Unix milliseconds. */
  expiresAt: number;
  scope: string;
}

export interface ClientCredentials {
  authUrl: string;
  clientId: string;
  clientSecret: string;
  scope: string | readonly string[];
  fetch?: typeof fetch;
  now?: () => Date;
}

export class TokenEndpointError extends Error {
  constructor(
    readonly status: number,
    readonly error: string,
    readonly description: string | undefined,
  ) {
    super(`token endpoint answered ${status} ${error}${description ? `: ${description}` : ""}`);
    this.name = "TokenEndpointError";
  }
}

const scopeText = (scope: string | readonly string[]) => (typeof scope === "string" ? scope : scope.join(" "));

async function tokenRequest(client: ClientCredentials, grant: Record<string, string>): Promise<TokenSet> {
  registerSecret(client.clientSecret);
  const scope = scopeText(client.scope);
  const body = { client_id: client.clientId, client_secret: client.clientSecret, scope, ...grant };
  const doFetch = client.fetch ?? fetch;
  const started = (client.now ?? (() => new Date()))().getTime();
  const response = await doFetch(client.authUrl.replace(/\/+$/, "") + "/auth/oauth2/token", {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json" },
    body: JSON.stringify(body),
  });
  const json = (await response.json().catch(() => ({}))) as Record<string, unknown>;
  if (!response.ok) {
    throw new TokenEndpointError(response.status, String(json.error ?? "http_error"), json.error_description as string | undefined);
  }
  const { access_token, refresh_token, expires_in, token_type } = json;
  if (typeof access_token !== "string" || typeof refresh_token !== "string" || typeof expires_in !== "number" || String(token_type).toLowerCase() !== "bearer") {
    throw new TokenEndpointError(response.status, "invalid_response", "token response lacks access_token, refresh_token, expires_in or token_type bearer");
  }
  registerSecret(access_token);
  registerSecret(refresh_token);
  // Measured from when the request started, so network time only shortens the assumed lifetime.
  return { accessToken: access_token, refreshToken: refresh_token, expiresAt: started + expires_in * 1000, scope };
}

export function exchangeCode(client: ClientCredentials, code: string, redirectUri?: string): Promise<TokenSet> {
  const grant: Record<string, string> = { grant_type: "authorization_code", code };
  if (redirectUri !== undefined) grant.redirect_uri = redirectUri;
  return tokenRequest(client, grant);
}

export function refreshTokens(client: ClientCredentials, refreshToken: string): Promise<TokenSet> {
  return tokenRequest(client, { grant_type: "refresh_token", refresh_token: refreshToken });
}
