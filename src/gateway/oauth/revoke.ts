import type { Context } from "hono";
import type { OAuthClientConfig } from "../config-schema.js";
import type { GatewayEnv } from "../http/middleware.js";
import { jsonResponse } from "../http/respond.js";
import type { TokenStore } from "../state/token-store.js";
import { authenticateClient } from "./client-auth.js";
import { OAuthError, oauthErrorResponse } from "./oauth-error.js";
import { readTokenParams } from "./token-request.js";

/**
 * `POST /auth/oauth2/revoke` (RFC 7009). The client authenticates as on the
 * token endpoint. Revoking an access or a refresh token revokes its whole
 * family (every token descended from the same authorization), the same
 * thing reuse detection does. An unknown token, or one issued to another
 * client, answers 200 and changes nothing: the RFC's answer for invalid
 * tokens, and no oracle for whether someone else's token exists.
 */
export interface RevokeEndpointOptions {
  store: TokenStore;
  clients: ReadonlyMap<string, OAuthClientConfig>;
  maxBodyBytes: number;
}

export function revokeEndpoint(options: RevokeEndpointOptions) {
  return async (c: Context<GatewayEnv>): Promise<Response> => {
    try {
      if (c.req.method !== "POST") {
        return jsonResponse(c, 405, { error: "invalid_request", error_description: "use POST" }, { allow: "POST", "cache-control": "no-store" });
      }
      const params = await readTokenParams(c, options.maxBodyBytes);
      const client = await authenticateClient(options.clients, params, c.req.header("authorization"));
      const token = params.get("token");
      if (!token) throw new OAuthError("invalid_request", "token is required");
      const hintText = params.get("token_type_hint");
      // RFC 7009 §2.1: an unknown hint is ignored, the server searches every type.
      const hint = hintText === "access_token" || hintText === "refresh_token" ? hintText : undefined;
      await options.store.transaction(async (tx) => {
        const family = await tx.findFamilyOf(token, hint);
        if (family && family.clientId === client.clientId) await tx.revokeFamily(family.id, "revoked_by_client");
      });
      c.header("cache-control", "no-store");
      return c.body(null, 200);
    } catch (err) {
      if (err instanceof OAuthError) return oauthErrorResponse(c, err);
      throw err;
    }
  };
}
