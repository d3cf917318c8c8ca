import type { OAuthClientConfig } from "../config-schema.js";
import { jsonResponse } from "../http/respond.js";
import { parseScope } from "../scope-set.js";
import type { TokenStore } from "../state/token-store.js";
import { authorizationCodeGrant, refreshTokenGrant, type GrantResult } from "./grants.js";
import { clientEndpoint, type ClientEndpointOptions } from "./client-endpoint.js";
import { OAuthError } from "./oauth-error.js";

/** `POST /auth/oauth2/token`: both grants of spec §4.2/§4.3, errors per RFC 6749 §5.2. */
export type TokenEndpointOptions = ClientEndpointOptions;

export function tokenEndpoint(options: TokenEndpointOptions) {
  return clientEndpoint(options, async (c, client, params) => {
    const result = await runGrant(options.store, client, params);
    if (!result.ok) throw new OAuthError(result.error, result.description);
    return jsonResponse(
      c,
      200,
      { access_token: result.tokens.accessToken, token_type: "bearer", expires_in: result.tokens.expiresIn, refresh_token: result.tokens.refreshToken },
      { "cache-control": "no-store", pragma: "no-cache" },
    );
  });
}

function runGrant(store: TokenStore, client: OAuthClientConfig, params: Map<string, string>): Promise<GrantResult> {
  const clientId = client.clientId;
  const grantType = params.get("grant_type");
  if (!grantType) throw new OAuthError("invalid_request", "grant_type is required");
  if (grantType !== "authorization_code" && grantType !== "refresh_token") {
    throw new OAuthError("unsupported_grant_type", `grant_type ${JSON.stringify(grantType)} is not supported`);
  }
  const scopeText = params.get("scope");
  if (scopeText === undefined) throw new OAuthError("invalid_request", "scope is required and must equal the authorized scope");
  const scope = parseScope(scopeText);
  if (!scope) throw new OAuthError("invalid_scope", "scope is malformed");
  if (grantType === "authorization_code") {
    const code = params.get("code");
    if (!code) throw new OAuthError("invalid_request", "code is required");
    return authorizationCodeGrant(store, { clientId, code, scope, redirectUri: params.get("redirect_uri"), codeVerifier: params.get("code_verifier"), requirePkce: !client.secretHash });
  }
  const refreshToken = params.get("refresh_token");
  if (!refreshToken) throw new OAuthError("invalid_request", "refresh_token is required");
  return refreshTokenGrant(store, { clientId, refreshToken, scope });
}
