import { createHash } from "node:crypto";
import { constantTimeEqual } from "../constant-time.js";

/**
 * PKCE (RFC 7636) with S256 only: `plain` sends the secret in the clear and
 * RFC 9700 §2.1.1 says not to use it. Verifiers and challenges have the
 * grammar of RFC 7636 §4.1/§4.2 (43-128 unreserved characters; a S256
 * challenge is exactly 43 base64url characters).
 */
const VERIFIER = /^[A-Za-z0-9\-._~]{43,128}$/;
const S256_CHALLENGE = /^[A-Za-z0-9\-_]{43}$/;

export function isValidChallenge(challenge: string): boolean {
  return S256_CHALLENGE.test(challenge);
}

export function isValidVerifier(verifier: string): boolean {
  return VERIFIER.test(verifier);
}

export function s256(verifier: string): string {
  return createHash("sha256").update(verifier, "ascii").digest("base64url");
}

export function verifierMatches(verifier: string, challenge: string): boolean {
  return isValidVerifier(verifier) && constantTimeEqual(s256(verifier), challenge);
}
