import { HttpError } from "../http/http-error.js";
import type { Middleware } from "../http/middleware.js";
import type { AccessCheck } from "../oauth/introspect.js";
import { bearerChallenge } from "./challenges.js";

/**
 * `Authorization: Bearer <token>` (RFC 6750 §2.1). A malformed header is 400
 * invalid_request; an unknown, expired or revoked token is 401 invalid_token.
 * The token is looked up by its SHA-256, so no comparison ever runs on the
 * token itself.
 */
const BEARER = /^Bearer +([A-Za-z0-9\-._~+/]+=*) *$/i;

const DESCRIPTIONS = {
  unknown: "the access token is invalid",
  expired: "the access token expired",
  revoked: "the access token was revoked",
} as const;

export function bearerAuth(options: { verifyToken: (token: string) => AccessCheck | Promise<AccessCheck> }): Middleware {
  return async (c, next) => {
    const match = BEARER.exec(c.req.header("authorization") ?? "");
    if (!match) {
      const description = "Authorization must be `Bearer <token>`";
      throw new HttpError(400, "invalid_request", description, { "www-authenticate": bearerChallenge({ error: "invalid_request", description }) });
    }
    const check = await options.verifyToken(match[1]!);
    if (!check.ok) {
      const description = DESCRIPTIONS[check.reason];
      throw new HttpError(401, "invalid_token", description, { "www-authenticate": bearerChallenge({ error: "invalid_token", description }) });
    }
    c.set("identity", { kind: "user", ...check.identity });
    await next();
  };
}
