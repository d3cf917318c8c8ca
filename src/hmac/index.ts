/**
 * HMAC request signing kit (docs/hmac.md): signer, verifier, fetch wrapper
 * and the building blocks a gateway composes (see docs/hmac.md).
 */
export { signRequest, signRequestInputSchema, type SignRequestInput, type SignedRequest } from "./sign-request.js";
export { verifyRequest, verifyRequestSync, type VerifyRequestInput, type VerifyRequestSyncInput } from "./verify-request.js";
export {
  VERIFY_CHECKS,
  type VerifyCheck,
  type VerifyFailure,
  type VerifyResult,
  type VerifySuccess,
  type RequestHeaders,
} from "./verify-result.js";
export { createSignedFetch, type SignedFetch, type SignedFetchOptions } from "./signed-fetch.js";
export { bodySha256, checkDigestHeader, createBodyDigest, digestHeaderValue, requiresDigest, type BodyDigest } from "./body-digest.js";
export { formatHttpDate, parseHttpDate } from "../core/http-date.js";
export { formatAuthorization, parseAuthorization, ALGORITHM, SIGNED_HEADERS } from "./authorization-header.js";
export { buildSigningString, computeSignature, requestLine } from "./signing-string.js";
export { prepareHmacKeys } from "./keyed-hmac.js";
export { DEFAULT_MAX_SKEW_SECONDS } from "./check-date.js";
