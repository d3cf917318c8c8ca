import { HttpError } from "../http/http-error.js";
import type { Context } from "hono";
import type { GatewayEnv, Middleware } from "../http/middleware.js";
import { bearerChallenge, hmacChallenge } from "./challenges.js";

/**
 * Picks the authentication chain by the Authorization scheme, among the
 * methods the product accepts (spec §1: not every endpoint takes both).
 * Without credentials the answer is 401 with one challenge per method.
 */
export interface AuthenticateOptions {
  bearer: Middleware;
  hmac: Middleware;
}

export function authenticate(options: AuthenticateOptions): Middleware {
  return async (c, next) => {
    return authScheme(c) === "bearer" ? options.bearer(c, next) : options.hmac(c, next);
  };
}

/** Which method authenticates this request, or a 401 naming the accepted ones. */
export function authScheme(c: Context<GatewayEnv>): "bearer" | "hmac" {
  const accepted = c.get("product")?.auth ?? ["bearer", "hmac"];
  const header = c.req.header("authorization");
  const scheme = header?.trimStart().split(/\s/, 1)[0]?.toLowerCase();
  if (scheme === "bearer" && accepted.includes("bearer")) return "bearer";
  if (scheme === "hmac" && accepted.includes("hmac")) return "hmac";
  const challenges = accepted.map((m) => (m === "bearer" ? bearerChallenge() : hmacChallenge()));
  const description = header
    ? `this route accepts ${accepted.map((m) => (m === "bearer" ? "Bearer" : "hmac")).join(" or ")} credentials`
    : "credentials are required";
  throw new HttpError(401, header ? "invalid_request" : "unauthorized", description, { "www-authenticate": challenges });
}
