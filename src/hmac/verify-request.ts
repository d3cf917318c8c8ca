import { checkAuthorization } from "./check-authorization.js";
import { checkDate, DEFAULT_MAX_SKEW_SECONDS } from "./check-date.js";
import { checkDigest } from "./check-digest.js";
import { checkSignature } from "./check-signature.js";
import { buildSigningString } from "./signing-string.js";
import { failure, type RequestHeaders, type VerifyFailure, type VerifyResult } from "./verify-result.js";

export type VerifyRequestInput = {
  method: string;
  /** The path and query exactly as sent, e.g. the raw `req.url` of node:http. */
  requestTarget: string;
  /** Header name (lower case) to value, e.g. `req.headers`. */
  headers: RequestHeaders;
  /** The raw body bytes as received; absent means an empty body. */
  body?: Uint8Array | string;
  /** SHA-256 of the raw body computed while streaming (see `createBodyDigest`); wins over `body`. */
  bodySha256?: Buffer;
  lookupSecret(clientId: string): string | undefined | Promise<string | undefined>;
  now?: Date;
  allowDeprecatedRequestLine?: boolean;
  maxSkewSeconds?: number;
};

/** A verifier input whose secret lookup answers at once (an in-memory table). */
export type VerifyRequestSyncInput = Omit<VerifyRequestInput, "lookupSecret"> & { lookupSecret(clientId: string): string | undefined };

/**
 * The HMAC verifier (docs/hmac.md). Checks run in a fixed order and the first
 * failure is returned by name: authorization-grammar, algorithm, headers,
 * date-missing, date-format, date-skew, digest-missing, digest-mismatch,
 * unknown-client, signature / deprecated-request-line. It never throws on
 * request data; only an exception from `lookupSecret` propagates.
 */
export async function verifyRequest(input: VerifyRequestInput): Promise<VerifyResult> {
  const before = checksBeforeSecret(input);
  if (!before.ok) return before;
  return checkWithSecret(input, before, before.clientId === "" ? undefined : await input.lookupSecret(before.clientId));
}

/** The same checks, for a caller whose secrets are in memory: no promise, no microtask per request (the gateway's hot path). */
export function verifyRequestSync(input: VerifyRequestSyncInput): VerifyResult {
  const before = checksBeforeSecret(input);
  if (!before.ok) return before;
  return checkWithSecret(input, before, before.clientId === "" ? undefined : input.lookupSecret(before.clientId));
}

type BeforeSecret = { ok: true; clientId: string; signature: string; date: string };

function checksBeforeSecret(input: Omit<VerifyRequestInput, "lookupSecret">): BeforeSecret | VerifyFailure {
  const { method, requestTarget, headers } = input;
  const signingStringFor = (date: string) => buildSigningString(date, method, requestTarget);

  const auth = checkAuthorization(headers);
  if (!auth.ok) return auth;
  const clientId = auth.params.username;

  const date = checkDate(headers, input.now ?? new Date(), input.maxSkewSeconds ?? DEFAULT_MAX_SKEW_SECONDS, signingStringFor);
  if (!date.ok) return { ...date, clientId };

  const digest = checkDigest(method, headers, input);
  if (!digest.ok) return { ...digest, clientId, expectedSigningString: signingStringFor(date.date) };
  return { ok: true, clientId, signature: auth.params.signature, date: date.date };
}

function checkWithSecret(input: Omit<VerifyRequestInput, "lookupSecret">, before: BeforeSecret, secret: string | undefined): VerifyResult {
  const { method, requestTarget } = input;
  const { clientId, date } = before;
  if (secret === undefined || secret === "") {
    return failure("unknown-client", `no HMAC credential is known for username ${JSON.stringify(clientId)}`, {
      clientId,
      expectedSigningString: buildSigningString(date, method, requestTarget),
    });
  }

  const signature = checkSignature({
    secret,
    signature: before.signature,
    date,
    method,
    requestTarget,
    clientId,
    allowDeprecatedRequestLine: input.allowDeprecatedRequestLine ?? false,
  });
  if (!signature.ok) return signature;
  return { ok: true, clientId, deprecatedRequestLine: signature.deprecatedRequestLine, signingString: signature.signingString, signature: before.signature };
}
