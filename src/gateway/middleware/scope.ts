import { HttpError } from "../http/http-error.js";
import type { CallerIdentity, Middleware, ProductTarget } from "../http/middleware.js";
import { scopeCoversProduct } from "../scope-set.js";
import { bearerChallenge, hmacChallenge } from "./challenges.js";

/**
 * Authorization to the product in the path: a token's scope must cover it
 * (403 insufficient_scope, RFC 6750 §3.1); an HMAC credential must be bound
 * to it (spec §2.2; 401 with the hmac challenge, like every HMAC failure).
 */
export function productAccess(): Middleware {
  return async (c, next) => {
    const product = c.get("product");
    const identity = c.get("identity");
    if (!product || !identity) throw new HttpError(500, "server_error", "productAccess runs after productRoute and authentication");
    checkProductAccess(product, identity, c.req.method);
    await next();
  };
}

/** The check itself, for the HMAC fast path too (hmac-fast-path.ts). */
export function checkProductAccess(product: ProductTarget, identity: CallerIdentity, method: string): void {
  if (identity.kind === "user" && !scopeCoversProduct(identity.scopes, product.name, method)) {
    const description = `the token's scope does not cover ${product.name} for ${method}`;
    throw new HttpError(403, "insufficient_scope", description, {
      "www-authenticate": bearerChallenge({ error: "insufficient_scope", description, scope: product.name }),
    });
  }
  if (identity.kind === "company" && identity.product !== product.name) {
    throw new HttpError(
      401,
      "invalid_hmac",
      `the credential belongs to another product, not ${product.name} (one HMAC credential per product)`,
      { "www-authenticate": hmacChallenge() },
      { check: "product" },
    );
  }
}
