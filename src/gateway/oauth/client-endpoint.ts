import type { Context } from "hono";
import type { OAuthClientConfig } from "../config-schema.js";
import { holdAnswer } from "../http/answer-hold.js";
import type { GatewayEnv } from "../http/middleware.js";
import { jsonResponse } from "../http/respond.js";
import type { TokenStore } from "../state/token-store.js";
import { authenticateClient } from "./client-auth.js";
import { OAuthError, oauthErrorResponse } from "./oauth-error.js";
import { readTokenParams } from "./token-request.js";

export interface ClientEndpointOptions {
  store: TokenStore;
  clients: ReadonlyMap<string, OAuthClientConfig>;
  maxBodyBytes: number;
}

/**
 * What the token and revocation endpoints share: POST only, a form body
 * within the limit, an authenticated client, and OAuth errors answered in
 * RFC 6749 §5.2 form. `handle` sees the client and the form's parameters.
 */
export function clientEndpoint(
  options: ClientEndpointOptions,
  handle: (c: Context<GatewayEnv>, client: OAuthClientConfig, params: Map<string, string>) => Promise<Response>,
) {
  return async (c: Context<GatewayEnv>): Promise<Response> => {
    try {
      if (c.req.method !== "POST") {
        return jsonResponse(c, 405, { error: "invalid_request", error_description: "use POST" }, { allow: "POST", "cache-control": "no-store" });
      }
      const params = await readTokenParams(c, options.maxBodyBytes);
      const client = await authenticateClient(options.clients, params, c.req.header("authorization"));
      // From here the state may change (a grant, a revocation): a shutdown lets this answer finish.
      holdAnswer(c.env.outgoing);
      return await handle(c, client, params);
    } catch (err) {
      if (err instanceof OAuthError) return oauthErrorResponse(c, err);
      throw err;
    }
  };
}
