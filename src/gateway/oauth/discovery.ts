import type { Context } from "hono";
import type { GatewayConfig } from "../config-schema.js";
import type { GatewayEnv } from "../http/middleware.js";
import { jsonResponse } from "../http/respond.js";

/**
 * Authorization server metadata (RFC 8414) at
 * `/.well-known/oauth-authorization-server`: enough for a client library to
 * find every endpoint and learn what this server accepts, with no other
 * configuration than the issuer URL.
 */
export const METADATA_PATH = "/.well-known/oauth-authorization-server";
export const AUTHORIZE_PATH = "/auth";
export const TOKEN_PATH = "/auth/oauth2/token";
export const REVOKE_PATH = "/auth/oauth2/revoke";

const CLIENT_AUTH_METHODS = ["client_secret_basic", "client_secret_post", "none"];

export function authorizationServerMetadata(issuer: string, config: GatewayConfig): Record<string, unknown> {
  const scopes = Object.keys(config.products).flatMap((p) => [p, `${p}:read`]);
  return {
    issuer,
    authorization_endpoint: issuer + AUTHORIZE_PATH,
    token_endpoint: issuer + TOKEN_PATH,
    revocation_endpoint: issuer + REVOKE_PATH,
    response_types_supported: ["code"],
    response_modes_supported: ["query"],
    grant_types_supported: ["authorization_code", "refresh_token"],
    code_challenge_methods_supported: ["S256"],
    token_endpoint_auth_methods_supported: CLIENT_AUTH_METHODS,
    revocation_endpoint_auth_methods_supported: CLIENT_AUTH_METHODS,
    scopes_supported: scopes,
    authorization_response_iss_parameter_supported: true,
  };
}

/**
 * With a configured `issuer` the document is the same for every request and
 * any cache may keep it for an hour. Without one the issuer and every
 * endpoint are read from this request's Host (and, behind a trusted proxy,
 * X-Forwarded-Proto), so the answer is `no-store`: a shared cache must never
 * hand one caller's Host-made metadata to the next. `Vary: Host` would not
 * do: caches key on the URL they were asked for, not on what the gateway
 * was told, and a forwarded scheme is not in Host at all.
 */
export function discoveryCacheControl(config: Pick<GatewayConfig, "issuer">): string {
  return config.issuer === undefined ? "no-store" : "public, max-age=3600";
}

export function discoveryEndpoint(config: GatewayConfig, issuer: (c: Context<GatewayEnv>) => string) {
  const cacheControl = discoveryCacheControl(config);
  return (c: Context<GatewayEnv>): Response => jsonResponse(c, 200, authorizationServerMetadata(issuer(c), config), { "cache-control": cacheControl });
}
