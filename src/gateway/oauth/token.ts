import type { Context } from "hono";
import type { OAuthClientConfig } from "../config-schema.js";
import type { GatewayEnv } from "../http/middleware.js";
import { jsonResponse } from "../http/respond.js";
import { parseScope } from "../scope-set.js";
import type { TokenStore } from "../state/token-store.js";
import { authorizationCodeGrant, refreshTokenGrant, type GrantResult } from "./grants.js";
import { authenticateClient } from "./client-auth.js";
import { OAuthError, oauthErrorResponse } from "./oauth-error.js";
import { readTokenParams } from "./token-request.js";

/** `POST /auth/oauth2/token`: both grants of spec §4.2/§4.3, errors per RFC 6749 §5.2. */
export interface TokenEndpointOptions {
  store: TokenStore;
  clients: ReadonlyMap<string, OAuthClientConfig>;
  maxBodyBytes: number;
}

export function tokenEndpoint(options: TokenEndpointOptions) {
  return async (c: Context<GatewayEnv>): Promise<Response> => {
    try {
      if (c.req.method !== "POST") {
        return jsonResponse(c, 405, { error: "invalid_request", error_description: "use POST" }, { allow: "POST", "cache-control": "no-store" });
      }
      const params = await readTokenParams(c, options.maxBodyBytes);
      const client = await authenticateClient(options.clients, params, c.req.header("authorization"));
      const result = await runGrant(options.store, client, params);
      if (!result.ok) throw new OAuthError(result.error, result.description);
      return jsonResponse(
        c,
        200,
        { access_token: result.tokens.accessToken, token_type: "bearer", expires_in: result.tokens.expiresIn, refresh_token: result.tokens.refreshToken },
        { "cache-control": "no-store", pragma: "no-cache" },
      );
    } catch (err) {
      if (err instanceof OAuthError) return oauthErrorResponse(c, err);
      throw err;
    }
  };
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
