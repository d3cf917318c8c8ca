import { createHash, randomBytes } from "node:crypto";
import type { HmacCredential } from "../config-schema.js";
import { HttpError } from "../http/http-error.js";
import type { IncomingMessage, ServerResponse } from "node:http";
import { rawTarget, type CallerIdentity, type Middleware } from "../http/middleware.js";
import type { HmacVerifier, HmacVerifyResult } from "../hmac-verifier.js";
import { hmacChallenge } from "./challenges.js";
import { acceptedOnce } from "./replay-guard.js";

/**
 * Checks the HMAC signature (and Digest) with the HMAC kit's verifier and
 * turns the credential into the caller's identity (company and product).
 * Every failure is 401 with the hmac challenge; the body names the failed
 * check and, when known, the signing string and Digest the gateway expected
 * (built only from the Date, the request-line and the body, all of which the
 * caller sent, so they help debugging without revealing anything).
 *
 * A request with a method accepted only once carries its signature on to
 * replay-guard.ts, which records it after the product check.
 *
 * An unknown client id must not be told apart from a wrong signature (that
 * would let anyone enumerate credentials): its signature is checked against
 * a random key of this process, so it fails the same check, with the same
 * answer, after the same work.
 */
export interface HmacAuthOptions {
  verify: HmacVerifier;
  credentials: ReadonlyMap<string, HmacCredential>;
  maxSkewSeconds: number;
  allowDeprecatedRequestLine: boolean;
}

/** The changelog date (2023-12-12) that deprecated the request-line without query (RFC 9745 form). */
const DEPRECATION = "@1702339200";

const EMPTY_BODY_SHA256 = createHash("sha256").digest();

const UNKNOWN_CLIENT_KEY = randomBytes(32).toString("base64url");

export function hmacAuth(options: HmacAuthOptions): Middleware {
  const check = hmacCheck(options);
  return async (c, next) => {
    const caller = await check(c.env.incoming, c.get("now"), c.get("body"));
    markDeprecatedRequestLine(c.env.outgoing, caller);
    c.set("identity", caller.identity);
    if (caller.replaySignature !== undefined) c.set("replaySignature", caller.replaySignature);
    await next();
  };
}

/** A verified HMAC caller: its identity, and whether its signature covers the deprecated request-line. */
export interface HmacCaller {
  identity: CallerIdentity;
  deprecatedRequestLine: boolean;
  /** The signature, when the method is accepted only once (replay-guard.ts); absent on GET, HEAD and OPTIONS. */
  replaySignature?: string;
}

/**
 * The check itself, on node's request: the verified caller, or an
 * HttpError thrown (a rejection when the verifier answers with a promise).
 * Synchronous when the verifier is (the HMAC kit's is), so the HMAC fast
 * path (hmac-fast-path.ts) runs it without a promise.
 */
export function hmacCheck(options: HmacAuthOptions): (incoming: IncomingMessage, now: Date, body: Buffer | undefined) => HmacCaller | Promise<HmacCaller> {
  const lookupSecret = (clientId: string) => options.credentials.get(clientId)?.secret ?? UNKNOWN_CLIENT_KEY;
  // Each credential's caller, made once: the answer of every request it signs (frozen, shared).
  const callers = new Map<string, { current: HmacCaller; deprecated: HmacCaller }>();
  for (const credential of options.credentials.values()) {
    const identity: CallerIdentity = Object.freeze({ kind: "company", company: credential.company, clientId: credential.clientId, product: credential.product });
    callers.set(credential.clientId, {
      current: Object.freeze({ identity, deprecatedRequestLine: false }),
      deprecated: Object.freeze({ identity, deprecatedRequestLine: true }),
    });
  }
  // Every secret a request can be checked against, set up before the first request (see HmacVerifier.prepareSecrets).
  options.verify.prepareSecrets?.([...[...options.credentials.values()].map((c) => c.secret), UNKNOWN_CLIENT_KEY]);
  return (incoming, now, body) => {
    const method = incoming.method ?? "GET";
    const once = acceptedOnce(method);
    const result = options.verify({
      method,
      requestTarget: rawTarget(incoming),
      headers: incoming.headers,
      body,
      bodySha256: body ? undefined : EMPTY_BODY_SHA256,
      lookupSecret,
      now,
      allowDeprecatedRequestLine: options.allowDeprecatedRequestLine,
      maxSkewSeconds: options.maxSkewSeconds,
    });
    return result instanceof Promise ? result.then((r) => caller(r, callers, once)) : caller(result, callers, once);
  };
}

/** The Deprecation header (RFC 9745) of an answer to a caller that signed the deprecated request-line. */
export function markDeprecatedRequestLine(outgoing: ServerResponse, caller: HmacCaller): void {
  if (caller.deprecatedRequestLine) outgoing.setHeader("deprecation", DEPRECATION);
}

function caller(result: HmacVerifyResult, callers: ReadonlyMap<string, { current: HmacCaller; deprecated: HmacCaller }>, once: boolean): HmacCaller {
  if (!result.ok) {
    const extra: Record<string, unknown> = { check: result.check };
    if (result.expectedSigningString !== undefined) extra.expected_signing_string = result.expectedSigningString;
    if (result.expectedDigest !== undefined) extra.expected_digest = result.expectedDigest;
    throw new HttpError(401, "invalid_hmac", result.message, { "www-authenticate": hmacChallenge() }, extra);
  }
  const known = callers.get(result.clientId);
  // Only reachable if someone signed with this process's random key.
  if (!known) throw new HttpError(401, "invalid_hmac", "the signature does not match", { "www-authenticate": hmacChallenge() }, { check: "signature" });
  const shared = result.deprecatedRequestLine ? known.deprecated : known.current;
  return once ? { ...shared, replaySignature: result.signature } : shared;
}
