import { createHash, createHmac, type Hash } from "node:crypto";

/**
 * HMAC-SHA256 (RFC 2104) with the key set up once per secret: the SHA-256
 * states after the key block XOR ipad and XOR opad are kept, and each
 * message copies them instead of keying a new HMAC. Keying (OpenSSL's
 * HMAC_Init_ex, which fetches the digest each time) was the largest single
 * cost of verifying a request in the gateway (see docs/gateway.md,
 * "Measured"). The result is byte for byte `createHmac("sha256", secret)`.
 *
 * The states are kept for up to MAX_KEYS secrets; past that, a new secret
 * is computed with createHmac and not kept, so the table stays bounded
 * whoever supplies the secrets. A verifier that must not be timed apart by
 * first use (the gateway: an unknown client id must cost what a known one
 * does) prepares its secrets up front with prepareHmacKeys.
 */
const BLOCK_BYTES = 64;
const MAX_KEYS = 4096;

interface KeyedStates {
  inner: Hash;
  outer: Hash;
}

const keyed = new Map<string, KeyedStates>();

function keyStates(secret: string): KeyedStates {
  let key = Buffer.from(secret, "utf8");
  if (key.length > BLOCK_BYTES) key = createHash("sha256").update(key).digest();
  const ipad = Buffer.alloc(BLOCK_BYTES, 0x36);
  const opad = Buffer.alloc(BLOCK_BYTES, 0x5c);
  for (let i = 0; i < key.length; i++) {
    ipad[i]! ^= key[i]!;
    opad[i]! ^= key[i]!;
  }
  return { inner: createHash("sha256").update(ipad), outer: createHash("sha256").update(opad) };
}

/** Sets up and keeps the keyed states of these secrets now (within the table's bound). */
export function prepareHmacKeys(secrets: Iterable<string>): void {
  for (const secret of secrets) {
    if (keyed.size >= MAX_KEYS) return;
    if (!keyed.has(secret)) keyed.set(secret, keyStates(secret));
  }
}

/** HMAC-SHA256 of the UTF-8 bytes of `message` under the UTF-8 bytes of `secret`. */
export function hmacSha256(secret: string, message: string): Buffer {
  let states = keyed.get(secret);
  if (!states) {
    if (keyed.size >= MAX_KEYS) return createHmac("sha256", Buffer.from(secret, "utf8")).update(message, "utf8").digest();
    states = keyStates(secret);
    keyed.set(secret, states);
  }
  const inner = states.inner.copy().update(message, "utf8").digest();
  return states.outer.copy().update(inner).digest();
}
