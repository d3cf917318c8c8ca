import { HttpError } from "../http/http-error.js";
import type { Middleware } from "../http/middleware.js";
import { hasBody, readBoundedBody } from "../http/read-body.js";

/**
 * An HMAC request's Digest (spec §5.2) covers the whole body, and the body
 * must not reach the upstream before the Digest is checked. So HMAC bodies
 * are read into memory, up to `maxBodyBytes` (413 beyond; the spec advises
 * against Digest for large uploads). Bearer requests never pass here and
 * stream.
 *
 * A GET or HEAD that announces a body (Content-Length above 0, or
 * Transfer-Encoding) is refused with 400: such a body has no defined
 * meaning (RFC 9110 §9.3.1-2), the Fetch view hono reads bodies through
 * has none for these methods (the Digest would be checked against nothing
 * and the bytes dropped), and what an upstream would make of one is its
 * own. The connection is closed, as its unread body cannot be skipped
 * safely.
 */
export function signedBody(options: { maxBodyBytes: number }): Middleware {
  return async (c, next) => {
    const incoming = c.env.incoming;
    if (hasBody(incoming)) {
      if (incoming.method === "GET" || incoming.method === "HEAD") throw bodyNotAllowed(incoming.method);
      c.set("body", await readBoundedBody(c, options.maxBodyBytes));
    }
    await next();
  };
}

function bodyNotAllowed(method: string): HttpError {
  return new HttpError(
    400,
    "invalid_request",
    `an HMAC-signed ${method} request must not carry a body (it has Content-Length above 0 or Transfer-Encoding); send the ${method} without a body, or the body with POST, PUT or PATCH`,
    { connection: "close" },
  );
}
