/**
 * WWW-Authenticate challenges of the product routes: RFC 6750 §3 for
 * Bearer, and an `hmac` challenge naming the signed headers of spec §5.2.
 */
export const REALM = "relcast";

export function bearerChallenge(params: { error?: string; description?: string; scope?: string } = {}): string {
  const parts = [`realm="${REALM}"`];
  if (params.error) parts.push(`error="${params.error}"`);
  if (params.description) parts.push(`error_description="${params.description.replace(/["\\]/g, "'")}"`);
  if (params.scope) parts.push(`scope="${params.scope}"`);
  return `Bearer ${parts.join(", ")}`;
}

export function hmacChallenge(): string {
  return `hmac realm="${REALM}", algorithm="hmac-sha256", headers="date request-line"`;
}
