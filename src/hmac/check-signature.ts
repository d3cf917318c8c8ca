import { withoutQuery } from "./request-target.js";
import { diagnoseSignature } from "./signature-diagnosis.js";
import { buildSigningString, signatureMatches, signatureShapeProblem } from "./signing-string.js";
import { failure, type VerifyFailure } from "./verify-result.js";

export type SignatureInput = {
  secret: string;
  signature: string;
  date: string;
  method: string;
  requestTarget: string;
  clientId: string;
  allowDeprecatedRequestLine: boolean;
};

/**
 * Checks `signature` and `deprecated-request-line`. The request-line
 * without the query string is the form spec §5.2 deprecated (changelog
 * 2023-12-12; support announced to end 2023-03-31). It is recognised so
 * the caller is told precisely, and only accepted when the option says so.
 */
export function checkSignature(input: SignatureInput): { ok: true; deprecatedRequestLine: boolean; signingString: string } | VerifyFailure {
  const { secret, signature, date, method, requestTarget, clientId } = input;
  const expectedSigningString = buildSigningString(date, method, requestTarget);
  const extra = { expectedSigningString, clientId };

  const shape = signatureShapeProblem(signature);
  if (shape) return failure("signature", shape, extra);

  if (signatureMatches(secret, expectedSigningString, signature)) {
    return { ok: true, deprecatedRequestLine: false, signingString: expectedSigningString };
  }

  const path = withoutQuery(requestTarget);
  if (path !== undefined) {
    const deprecated = buildSigningString(date, method, path);
    if (signatureMatches(secret, deprecated, signature)) {
      if (input.allowDeprecatedRequestLine) return { ok: true, deprecatedRequestLine: true, signingString: deprecated };
      return failure(
        "deprecated-request-line",
        "the signature covers the request-line without the query string, a deprecated form the gateway no longer accepts; sign the path and query exactly as sent",
        extra,
      );
    }
  }

  const mistake = diagnoseSignature(secret, signature, date, method, requestTarget);
  const message = mistake
    ? `the signature does not match: the caller ${mistake}`
    : "the signature does not match the expected signing string (check the secret, the exact Date value, the method and the path?query as sent)";
  return failure("signature", message, extra);
}
