import { createHash, hash } from "node:crypto";

/**
 * HMAC-SHA256 (RFC 2104) as two one-shot SHA-256 calls over buffers set up
 * once per secret: H((K ^ opad) || H((K ^ ipad) || message)). The padded key
 * blocks are kept per secret; the message is written behind the inner block
 * in one scratch buffer, so a signature costs two `crypto.hash` calls and no
 * Hash object. Keying an HMAC per request (OpenSSL's HMAC_Init_ex fetches
 * the digest each time) was the largest single cost of verifying a request
 * in the gateway, and copying kept Hash states (two native objects per
 * request, each finalized by the garbage collector) the next (see
 * docs/gateway.md, "Measured"). The result is byte for byte
 * `createHmac("sha256", secret)`'s, which the tests check.
 *
 * Pads are kept for up to MAX_KEYS secrets; past that, a new secret's pads
 * are made for the call and not kept, so the table stays bounded whoever
 * supplies the secrets. A verifier that must not be timed apart by first
 * use (the gateway: an unknown client id must cost what a known one does)
 * prepares its secrets up front with prepareHmacKeys.
 */
const BLOCK_BYTES = 64;
const DIGEST_BYTES = 32;
const MAX_KEYS = 4096;
/** Messages up to this many UTF-8 bytes are hashed from the shared scratch buffer; longer ones get a buffer of their own. */
const SCRATCH_MESSAGE_BYTES = 8192;

interface KeyPads {
  /** K ^ ipad, one block. */
  inner: Buffer;
  /** K ^ opad, one block, then room for the inner digest. */
  outer: Buffer;
}

const keyed = new Map<string, KeyPads>();
const scratch = Buffer.alloc(BLOCK_BYTES + SCRATCH_MESSAGE_BYTES);

function keyPads(secret: string): KeyPads {
  let key = Buffer.from(secret, "utf8");
  if (key.length > BLOCK_BYTES) key = createHash("sha256").update(key).digest();
  const inner = Buffer.alloc(BLOCK_BYTES, 0x36);
  const outer = Buffer.alloc(BLOCK_BYTES + DIGEST_BYTES, 0x5c);
  for (let i = 0; i < key.length; i++) {
    inner[i]! ^= key[i]!;
    outer[i]! ^= key[i]!;
  }
  return { inner, outer };
}

/** Sets up and keeps the key pads of these secrets now (within the table's bound). */
export function prepareHmacKeys(secrets: Iterable<string>): void {
  for (const secret of secrets) {
    if (keyed.size >= MAX_KEYS) return;
    if (!keyed.has(secret)) keyed.set(secret, keyPads(secret));
  }
}

/**
 * HMAC-SHA256 of the UTF-8 bytes of `message` under the UTF-8 bytes of
 * `secret`, as canonical Base64 text, the form a signature travels in.
 * Neither digest becomes a Buffer (each would be a native allocation for
 * the collector to sweep): the inner one goes from a Latin-1 ("binary")
 * string straight into the outer block.
 */
export function hmacSha256Base64(secret: string, message: string): string {
  return hash("sha256", outerBlock(secret, message), "base64");
}

/** K ^ opad followed by the inner digest H((K ^ ipad) || message): the outer hash's input, in this secret's kept buffer. */
function outerBlock(secret: string, message: string): Buffer {
  let pads = keyed.get(secret);
  if (!pads) {
    pads = keyPads(secret);
    if (keyed.size < MAX_KEYS) keyed.set(secret, pads);
  }
  let innerInput: Buffer;
  // A UTF-8 character takes at most 3 bytes per UTF-16 code unit, so a message of up to a third of the room always fits.
  if (message.length <= SCRATCH_MESSAGE_BYTES / 3) {
    pads.inner.copy(scratch, 0);
    const written = scratch.write(message, BLOCK_BYTES, "utf8");
    innerInput = scratch.subarray(0, BLOCK_BYTES + written);
  } else {
    innerInput = Buffer.concat([pads.inner, Buffer.from(message, "utf8")]);
  }
  // The outer block is per secret and each call fills its digest room before hashing it: no call is ever in between (synchronous).
  pads.outer.write(hash("sha256", innerInput, "binary"), BLOCK_BYTES, "binary");
  return pads.outer;
}
