/**
 * What `verifyRequest` answers: success with the authenticated client, or
 * the first failing check by name with a message a caller can act on.
 * Nothing in a result is derived from the secret.
 */
export const VERIFY_CHECKS = [
  "authorization-grammar",
  "algorithm",
  "headers",
  "date-missing",
  "date-format",
  "date-skew",
  "digest-missing",
  "digest-mismatch",
  "unknown-client",
  "signature",
  "deprecated-request-line",
] as const;

export type VerifyCheck = (typeof VERIFY_CHECKS)[number];

export type VerifySuccess = {
  ok: true;
  clientId: string;
  /** True when the signature covered the deprecated request-line without the query and that was allowed. */
  deprecatedRequestLine: boolean;
  signingString: string;
  /** The Authorization header's signature value that matched (what a verifier that refuses replays records). */
  signature: string;
};

export type VerifyFailure = {
  ok: false;
  check: VerifyCheck;
  message: string;
  /** The signing string the caller should have signed, when the Date header made it computable. */
  expectedSigningString?: string;
  /** The Digest header the caller should have sent, for digest failures. */
  expectedDigest?: string;
  /** The username of the Authorization header, once it parsed. */
  clientId?: string;
};

export type VerifyResult = VerifySuccess | VerifyFailure;

export type HeaderValue = string | readonly string[] | undefined;
export type RequestHeaders = Readonly<Record<string, HeaderValue>>;

export function failure(check: VerifyCheck, message: string, extra: Partial<VerifyFailure> = {}): VerifyFailure {
  return { ...extra, ok: false, check, message };
}

/** The one value of a header, `undefined` when absent, `null` when sent more than once. */
export function singleHeader(headers: RequestHeaders, name: string): string | undefined | null {
  let value = headers[name];
  if (value === undefined) {
    // Not under its lower-case name (node's headers always are): look for it in another case, lower-casing only names of its length.
    for (const key in headers) {
      if (key.length === name.length && Object.hasOwn(headers, key) && key.toLowerCase() === name) {
        value = headers[key];
        break;
      }
    }
  }
  if (value === undefined) return undefined;
  if (typeof value === "string") return value;
  if (value.length === 0) return undefined;
  return value.length === 1 ? (value[0] as string) : null;
}
