/**
 * The shape of the HMAC kit's `verifyRequest` (src/hmac, issue 9), as the
 * gateway uses it. The gateway depends on this type, not on the kit's
 * module, so the middleware can be tested with any verifier and the kit can
 * change internals freely.
 */
export interface HmacVerifyInput {
  method: string;
  /** Path and query exactly as received. */
  requestTarget: string;
  /** Lower-case header names (node's `req.headers`). */
  headers: Readonly<Record<string, string | readonly string[] | undefined>>;
  body?: Buffer;
  /** SHA-256 of the body when already known (the empty body's, for requests without one). */
  bodySha256?: Buffer;
  /** The gateway's HMAC secrets are its configuration, in memory: the lookup answers at once. */
  lookupSecret: (clientId: string) => string | undefined;
  now?: Date;
  allowDeprecatedRequestLine?: boolean;
  maxSkewSeconds?: number;
}

export type HmacVerifyResult =
  | { ok: true; clientId: string; deprecatedRequestLine: boolean; /** The signature value that matched, as sent. */ signature: string }
  | { ok: false; check: string; message: string; expectedSigningString?: string; expectedDigest?: string };

export type HmacVerifier = ((input: HmacVerifyInput) => HmacVerifyResult | Promise<HmacVerifyResult>) & {
  /**
   * Optional: does the per-secret setup for these secrets now (the HMAC
   * kit keeps each secret's keyed hash states), so that the first request
   * of a known client costs what a request of an unknown one does.
   */
  prepareSecrets?: (secrets: readonly string[]) => void;
};
