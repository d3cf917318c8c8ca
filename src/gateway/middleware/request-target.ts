import { HttpError } from "../http/http-error.js";
import type { IncomingMessage } from "node:http";

/**
 * hono (through the WHATWG URL parser) resolves `.` and `..` segments,
 * plain or percent-encoded, before routing, so `/v2/../auth/oauth2/token`
 * would reach the token endpoint and `/v2/crm/v1/%2e%2e/...` another
 * product. The gateway routes only targets that need no resolving: any
 * dot segment in the raw path is refused with 400 on every route. The
 * product routes refuse more (see product-route.ts).
 */
const DOT_SEGMENT = /(^|\/)(\.|%2e){1,2}(\/|$)/i;

/** Synchronous; run by the gateway's one global middleware (server.ts). */
export function checkNoDotSegments(req: IncomingMessage): void {
  const target = req.url ?? "/";
  // A fragment is never part of a request-target (origin-form is a path and a query); upstreams disagree on what `#` means there.
  if (target.includes("#")) throw new HttpError(400, "invalid_request", "the request target must not contain `#` (a fragment stays in the client); send the path and query only, or percent-encode `#` as %23");
  const q = target.indexOf("?");
  const path = q < 0 ? target : target.slice(0, q);
  if (DOT_SEGMENT.test(path)) throw new HttpError(400, "invalid_request", "the path must not contain `.` or `..` segments (plain or percent-encoded)");
}
