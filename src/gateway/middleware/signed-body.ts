import type { Middleware } from "../http/middleware.js";
import { hasBody, readBoundedBody } from "../http/read-body.js";

/**
 * An HMAC request's Digest (spec §5.2) covers the whole body, and the body
 * must not reach the upstream before the Digest is checked. So HMAC bodies
 * are read into memory, up to `maxBodyBytes` (413 beyond; the spec advises
 * against Digest for large uploads). Bearer requests never pass here and
 * stream.
 */
export function signedBody(options: { maxBodyBytes: number }): Middleware {
  return async (c, next) => {
    if (hasBody(c.env.incoming)) c.set("body", await readBoundedBody(c, options.maxBodyBytes));
    await next();
  };
}
