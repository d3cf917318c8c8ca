import { HttpError } from "../http/http-error.js";
import type { Middleware } from "../http/middleware.js";
import { hasBody, readBoundedBody } from "../http/read-body.js";
import { acceptedOnce } from "./replay-guard.js";

/**
 * An HMAC request's Digest (spec §5.2) covers the whole body, and the body
 * must not reach the upstream before the Digest is checked. So HMAC bodies
 * are read into memory, up to `maxBodyBytes` (413 beyond; the spec advises
 * against Digest for large uploads). Bearer requests never pass here and
 * stream.
 *
 * A request whose method may be repeated (GET, HEAD, OPTIONS: the replay
 * guard records nothing for them) that announces a body (Content-Length
 * above 0, or Transfer-Encoding) is refused with 400. The signature does
 * not cover the body, only the Digest does, so a copy of such a request
 * could be sent again within the skew window with a body of the sender's
 * choosing and a fresh Digest; only methods accepted once may carry one.
 * Such bodies also have no defined meaning for GET and HEAD (RFC 9110
 * §9.3.1-2), and the Fetch view hono reads bodies through has none for
 * them. The connection is closed, as its unread body cannot be skipped
 * safely.
 */
export function signedBody(options: { maxBodyBytes: number }): Middleware {
  return async (c, next) => {
    const incoming = c.env.incoming;
    if (hasBody(incoming)) {
      if (!acceptedOnce(incoming.method)) throw bodyNotAllowed(incoming.method ?? "");
      c.set("body", await readBoundedBody(c, options.maxBodyBytes));
    }
    await next();
  };
}

function bodyNotAllowed(method: string): HttpError {
  return new HttpError(
    400,
    "invalid_request",
    `an HMAC-signed ${method} request must not carry a body (it has Content-Length above 0 or Transfer-Encoding): ${method} may be repeated, so its body would not be protected against replay; send the ${method} without a body, or the body with POST, PUT or PATCH`,
    { connection: "close" },
  );
}
