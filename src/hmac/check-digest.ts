import { bodySha256, checkDigestHeader, EMPTY_BODY_SHA256, requiresDigest } from "./body-digest.js";
import { failure, singleHeader, type RequestHeaders, type VerifyFailure } from "./verify-result.js";

export type BodyEvidence = {
  /** The raw body bytes as received. */
  body?: Uint8Array | string | undefined;
  /** SHA-256 of the raw body, computed while streaming; wins over `body`. */
  bodySha256?: Buffer | undefined;
};

/**
 * Checks `digest-missing` and `digest-mismatch`. A Digest is required for
 * POST, PUT, PATCH and DELETE (even with an empty body) and, as Kong does,
 * for any other request that has a body, so no body bytes go unchecked; a
 * Digest that is sent is always checked. No body evidence means no body.
 */
export function checkDigest(method: string, headers: RequestHeaders, evidence: BodyEvidence): { ok: true } | VerifyFailure {
  const received = singleHeader(headers, "digest");
  const hash = evidence.bodySha256 ?? bodySha256(evidence.body);
  if (received === undefined) {
    const hasBody = !hash.equals(EMPTY_BODY_SHA256);
    if (!requiresDigest(method) && !hasBody) return { ok: true };
    const expectedDigest = `SHA-256=${hash.toString("base64")}`;
    const why = requiresDigest(method) ? `${method} requests must carry a Digest header` : `the ${method} request has a body but no Digest header`;
    return failure("digest-missing", why, { expectedDigest });
  }
  if (received === null) return failure("digest-mismatch", "the Digest header was sent more than once");
  const result = checkDigestHeader(received, hash);
  return result.ok ? result : failure("digest-mismatch", result.message, { expectedDigest: result.expected });
}
