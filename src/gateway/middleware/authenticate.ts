import { HttpError } from "../http/http-error.js";
import type { Middleware } from "../http/middleware.js";
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
    const accepted = c.get("product")?.auth ?? ["bearer", "hmac"];
    const header = c.req.header("authorization");
    const scheme = header?.trimStart().split(/\s/, 1)[0]?.toLowerCase();
    if (scheme === "bearer" && accepted.includes("bearer")) return options.bearer(c, next);
    if (scheme === "hmac" && accepted.includes("hmac")) return options.hmac(c, next);
    const challenges = accepted.map((m) => (m === "bearer" ? bearerChallenge() : hmacChallenge()));
    const description = header
      ? `this route accepts ${accepted.map((m) => (m === "bearer" ? "Bearer" : "hmac")).join(" or ")} credentials`
      : "credentials are required";
    throw new HttpError(401, header ? "invalid_request" : "unauthorized", description, { "www-authenticate": challenges });
  };
}
