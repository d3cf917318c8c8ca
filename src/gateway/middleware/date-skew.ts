import { parseHttpDate as parseImfFixdate } from "../../core/http-date.js";
import { HttpError } from "../http/http-error.js";
import type { IncomingMessage } from "node:http";
import type { Middleware } from "../http/middleware.js";
import { hmacChallenge } from "./challenges.js";

/**
 * Replay protection of spec §5.2: the Date header is required, must be an
 * RFC 7231 IMF-fixdate, and must differ from the gateway's clock by less than
 * `maxSkewSeconds`. Runs before the secret lookup and before any body is read,
 * so stale requests cost almost nothing. Check names match the HMAC kit's.
 */
/** The Date header as a time, or undefined unless it is an exact IMF-fixdate (the one parser, core/http-date). */
export function parseHttpDate(value: string): Date | undefined {
  const parsed = parseImfFixdate(value);
  return parsed.ok ? parsed.date : undefined;
}

export function dateSkew(options: { maxSkewSeconds: number }): Middleware {
  return async (c, next) => {
    checkDateSkew(c.env.incoming, c.get("now"), options.maxSkewSeconds);
    await next();
  };
}

/** The check itself, on node's request, for the HMAC fast path too (hmac-fast-path.ts). */
export function checkDateSkew(incoming: IncomingMessage, now: Date, maxSkewSeconds: number): void {
  // node's own header view: one Date (a second one is refused before, single-headers.ts), whitespace trimmed, no Fetch API Headers per request.
  const header = incoming.headers.date;
  const reject = (check: string, description: string) =>
    new HttpError(401, "invalid_hmac", description, { "www-authenticate": hmacChallenge() }, { check });
  if (!header) throw reject("date-missing", "the Date header is required on HMAC requests");
  const date = parseHttpDate(header);
  if (!date) throw reject("date-format", "the Date header must be an RFC 7231 HTTP-date such as `Tue, 15 Nov 1994 08:12:31 GMT`");
  const skew = Math.abs(now.getTime() - date.getTime()) / 1000;
  if (skew >= maxSkewSeconds) {
    throw reject("date-skew", `the Date header differs from the gateway clock by ${Math.round(skew)} s; it must be less than ${maxSkewSeconds} s`);
  }
}
