/**
 * A lower-case header name as upstream frameworks compare names: CGI,
 * WSGI, Rack and PHP turn `-` into `_` (PHP turns `.` and spaces into `_`
 * too), so `X_Relcast_User`, `X.Relcast.User` and `X-Relcast-User` reach
 * them as one header. The proxy's drop rules (proxy-headers.ts) and the
 * Connection check (connection-header.ts) compare this form (every run of
 * characters other than letters and digits read as `-`), so no spelling of
 * a header the gateway sets or drops passes.
 */
export function comparableName(lower: string): string {
  return PLAIN_NAME.test(lower) ? lower : lower.replace(/[^a-z0-9]+/g, "-");
}
const PLAIN_NAME = /^[a-z0-9-]*$/;
