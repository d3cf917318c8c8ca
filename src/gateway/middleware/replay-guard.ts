import { HttpError } from "../http/http-error.js";
import type { Middleware } from "../http/middleware.js";
import { hmacChallenge } from "./challenges.js";
import { parseHttpDate } from "./date-skew.js";

/**
 * Replay refusal for HMAC requests (issue 34). The signature covers only
 * the Date and the request-line, so within the skew window a copy of a
 * signed request (with any body and Digest) passes every other check. A
 * request with a method that changes something is accepted once: its
 * signature is recorded in the shared state (state/signature-ledger.ts)
 * just before the proxy, and a signature already recorded, by this
 * instance or another, is refused with 401 `check: "replay"`. The record
 * and the check are one INSERT, so of concurrent copies exactly one
 * passes. GET, HEAD and OPTIONS (safe methods, RFC 9110 §9.2.1) record
 * nothing and stay repeatable.
 */
export interface SignatureRecorder {
  /** Records the signature as used until `expiresAt` (Unix ms); false when it was recorded before. */
  use(signature: string, expiresAt: number): Promise<boolean>;
}

/** Whether a signed request with this method is accepted only once: every method but GET, HEAD and OPTIONS, in any spelling but those. */
export function acceptedOnce(method: string | undefined): boolean {
  return method !== "GET" && method !== "HEAD" && method !== "OPTIONS";
}

export function replayGuard(options: { signatures: SignatureRecorder; maxSkewSeconds: number }): Middleware {
  const windowMs = options.maxSkewSeconds * 1000;
  return async (c, next) => {
    const signature = c.get("replaySignature");
    if (signature !== undefined) {
      // The Date passed the skew check (date-skew.ts); past Date + window the signature is refused there, so the record can go.
      const date = parseHttpDate(c.env.incoming.headers.date ?? "")?.getTime() ?? c.get("now").getTime() + windowMs;
      if (!(await options.signatures.use(signature, date + windowMs))) throw replayed(c.env.incoming.method ?? "");
    }
    await next();
  };
}

function replayed(method: string): HttpError {
  return new HttpError(
    401,
    "invalid_hmac",
    `this signature was already accepted: a signed ${method} is accepted once (only GET, HEAD and OPTIONS may be repeated); to send the request again, sign it again with a new Date`,
    { "www-authenticate": hmacChallenge() },
    { check: "replay" },
  );
}
