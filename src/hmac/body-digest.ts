import { createHash, timingSafeEqual } from "node:crypto";

/**
 * The Digest header of the HMAC scheme (docs/hmac.md): `SHA-256=<Base64 of SHA-256 of the raw
 * body bytes>`. The bytes are the ones on the wire; re-serialising a parsed
 * JSON body gives a different digest. A gateway that streams the body can
 * feed chunks to `createBodyDigest()` and hand the final hash to the
 * verifier as `bodySha256` instead of buffering the whole body.
 */
export const DIGEST_METHODS: ReadonlySet<string> = new Set(["POST", "PUT", "PATCH", "DELETE"]);
const PREFIX = "SHA-256=";
const CANONICAL_SHA256_B64 = /^[A-Za-z0-9+/]{42}[AEIMQUYcgkosw048]=$/;

export function requiresDigest(method: string): boolean {
  return DIGEST_METHODS.has(method.toUpperCase());
}

export function bodySha256(body: Uint8Array | string = new Uint8Array()): Buffer {
  return createHash("sha256").update(body).digest();
}

export const EMPTY_BODY_SHA256: Buffer = bodySha256();

export function digestHeaderValue(body?: Uint8Array | string): string {
  return PREFIX + bodySha256(body).toString("base64");
}

export interface BodyDigest {
  update(chunk: Uint8Array | string): BodyDigest;
  /** SHA-256 of everything fed so far; call once, at the end of the body. */
  finish(): Buffer;
}

export function createBodyDigest(): BodyDigest {
  const hash = createHash("sha256");
  const digest: BodyDigest = {
    update(chunk) {
      hash.update(chunk);
      return digest;
    },
    finish: () => hash.digest(),
  };
  return digest;
}

export type DigestCheck = { ok: true } | { ok: false; mismatch: boolean; message: string; expected: string };

/** Compares a received Digest header with the SHA-256 of the body actually received. */
export function checkDigestHeader(received: string, sha256: Buffer): DigestCheck {
  const expected = PREFIX + sha256.toString("base64");
  const fail = (mismatch: boolean, message: string): DigestCheck => ({ ok: false, mismatch, message, expected });
  if (!received.startsWith(PREFIX)) {
    const shown = JSON.stringify(received.slice(0, 20));
    return fail(false, `the Digest header must start with "${PREFIX}" (exact case, one digest only), got ${shown}`);
  }
  const b64 = received.slice(PREFIX.length);
  if (!CANONICAL_SHA256_B64.test(b64)) {
    const hint = /^[0-9a-fA-F]{64}$/.test(b64) ? " (it is hex; Base64-encode the 32 hash bytes instead)" : "";
    return fail(false, `the Digest value is not Base64 of a 32-byte SHA-256${hint}`);
  }
  const a = Buffer.from(b64, "base64");
  if (a.length !== sha256.length || !timingSafeEqual(a, sha256)) {
    return fail(true, "the Digest does not match the SHA-256 of the body received; hash the raw bytes you send, not a re-serialised copy");
  }
  return { ok: true };
}
