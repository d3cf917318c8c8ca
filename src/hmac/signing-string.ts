import { createHmac, timingSafeEqual } from "node:crypto";
import { hmacSha256Base64 } from "./keyed-hmac.js";

/**
 * The signing string of the HMAC scheme (docs/hmac.md) and the signature over it. Two lines
 * joined by "\n", no trailing newline:
 *
 *   date: <Date header value, verbatim>
 *   <METHOD> <path>?<query> HTTP/1.1
 *
 * The protocol token is always `HTTP/1.1`, whatever version the transport
 * really used (Kong puts the transport's version there).
 */
export function requestLine(method: string, target: string): string {
  return `${method} ${target} HTTP/1.1`;
}

export function buildSigningString(date: string, method: string, target: string): string {
  return `date: ${date}\n${requestLine(method, target)}`;
}

/** Base64(HMAC-SHA256(key = UTF-8 bytes of the secret, message = signing string)). */
export function computeSignature(secret: string, signingString: string): string {
  return createHmac("sha256", Buffer.from(secret, "utf8")).update(signingString, "utf8").digest("base64");
}

const CANONICAL_SIGNATURE = /^[A-Za-z0-9+/]{42}[AEIMQUYcgkosw048]=$/;

/** Why a signature parameter can never be a Base64 HMAC-SHA256, or undefined when it can. */
export function signatureShapeProblem(signature: string): string | undefined {
  if (CANONICAL_SIGNATURE.test(signature)) return undefined;
  if (/^[A-Za-z0-9_-]{43}=?$/.test(signature)) return "the signature looks like base64url; use standard Base64 (+ and /) with \"=\" padding";
  if (/^[A-Za-z0-9+/]{43}$/.test(signature)) return "the signature lacks its \"=\" padding";
  if (/^[0-9a-fA-F]{64}$/.test(signature)) return "the signature is hex; the scheme wants Base64 of the 32 HMAC bytes";
  return `the signature must be 44 characters of Base64 (32 bytes), got ${signature.length} characters`;
}

/**
 * Whether `provided`, a signature of canonical shape (signatureShapeProblem
 * answered undefined), is the signature of `signingString`: its 32 bytes
 * against the HMAC's, timing-safe. Canonical Base64 (padding, zero pad
 * bits) has one spelling per byte string, so comparing the Base64 texts is
 * comparing the bytes.
 */
export function signatureMatches(secret: string, signingString: string, provided: string): boolean {
  const expected = hmacSha256Base64(secret, signingString);
  if (provided.length !== SIGNATURE_CHARS || expected.length !== SIGNATURE_CHARS) return false;
  // Both texts into buffers kept for this (one synchronous use at a time), compared timing-safe.
  expectedText.write(expected, 0, "latin1");
  providedText.write(provided, 0, "latin1");
  return timingSafeEqual(expectedText, providedText);
}

/** Base64 of 32 bytes, with its padding. */
const SIGNATURE_CHARS = 44;
const expectedText = Buffer.alloc(SIGNATURE_CHARS);
const providedText = Buffer.alloc(SIGNATURE_CHARS);

/** Timing-safe comparison of two Base64 signatures of equal, public length. */
export function signaturesEqual(expected: string, provided: string): boolean {
  const a = Buffer.from(expected, "latin1");
  const b = Buffer.from(provided, "latin1");
  return a.length === b.length && timingSafeEqual(a, b);
}
