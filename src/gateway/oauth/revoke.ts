import { clientEndpoint, type ClientEndpointOptions } from "./client-endpoint.js";
import { OAuthError } from "./oauth-error.js";

/**
 * `POST /auth/oauth2/revoke` (RFC 7009). The client authenticates as on the
 * token endpoint. Revoking an access or a refresh token revokes its whole
 * family (every token descended from the same authorization), the same
 * thing reuse detection does. An unknown token, or one issued to another
 * client, answers 200 and changes nothing: the RFC's answer for invalid
 * tokens, and no oracle for whether someone else's token exists.
 */
export type RevokeEndpointOptions = ClientEndpointOptions;

export function revokeEndpoint(options: RevokeEndpointOptions) {
  return clientEndpoint(options, async (c, client, params) => {
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
  });
}
