import { createHash, createPrivateKey, createPublicKey, verify as cryptoVerify, type KeyObject } from "node:crypto";
import { open } from "node:fs/promises";
import { ed25519 } from "@noble/curves/ed25519.js";

/**
 * Ed25519 (RFC 8032) over a file without holding it in memory. Signing needs
 * two passes over the message (nonce, then challenge); both stream through
 * the native SHA-512, and only the curve arithmetic runs in JS
 * (@noble/curves). Output is byte-identical to openssl / libsodium.
 */
const Point = ed25519.Point;
const L = Point.Fn.ORDER;
// A run makes a handful of base-point multiplications (a key, one nonce per signature): a 4-bit window's table
// costs ~25 ms to build against ~65 ms for noble's default 8 bits, which only pays off after hundreds of them.
Point.BASE.precompute(4, true);

/** An expanded signing key: clamped scalar, nonce prefix and public key. */
export interface ExpandedKey {
  scalar: bigint;
  prefix: Buffer;
  publicKey: Buffer;
}

const READ_CHUNK = 4 << 20;

function littleEndian(bytes: Uint8Array): bigint {
  let n = 0n;
  for (let i = bytes.length - 1; i >= 0; i--) n = (n << 8n) | BigInt(bytes[i]!);
  return n;
}

function toLittleEndian32(n: bigint): Buffer {
  const out = Buffer.alloc(32);
  let v = n;
  for (let i = 0; i < 32; i++) {
    out[i] = Number(v & 0xffn);
    v >>= 8n;
  }
  return out;
}

function clampedScalar(head: Uint8Array): bigint {
  const a = Buffer.from(head.subarray(0, 32));
  a[0]! &= 248;
  a[31]! &= 127;
  a[31]! |= 64;
  return littleEndian(a);
}

const PKCS8_ED25519_PREFIX = Buffer.from("302e020100300506032b657004220420", "hex");

/**
 * From the 32-byte seed Sparkle's `generate_keys -x` exports. The public key
 * comes from OpenSSL (the same RFC 8032 derivation from the same seed): a
 * base-point multiplication in JS costs a one-shot command such as
 * `relcast sign` 30-40 ms of its start-up.
 */
export function expandSeed(seed: Uint8Array): ExpandedKey {
  const digest = createHash("sha512").update(seed).digest();
  const scalar = clampedScalar(digest);
  const der = Buffer.concat([PKCS8_ED25519_PREFIX, seed]);
  try {
    const spki = createPublicKey(createPrivateKey({ key: der, format: "der", type: "pkcs8" })).export({ format: "der", type: "spki" });
    return { scalar, prefix: digest.subarray(32), publicKey: Buffer.from(spki.subarray(-32)) };
  } finally {
    der.fill(0);
  }
}

/** From the legacy 64-byte expanded secret (clamped scalar bytes + prefix) and its 32-byte public key. */
export function fromExpandedSecret(secret64: Uint8Array, publicKey: Uint8Array): ExpandedKey {
  const scalar = littleEndian(secret64.subarray(0, 32));
  return { scalar, prefix: Buffer.from(secret64.subarray(32, 64)), publicKey: Buffer.from(publicKey) };
}

/** The public key that the scalar really yields; differs from `publicKey` when a legacy file is inconsistent. */
export function derivePublicKey(key: ExpandedKey): Buffer {
  return Buffer.from(Point.BASE.multiply(key.scalar % L).toBytes());
}

type MessageSource = Buffer | { file: string };

/**
 * Streams a file through a hash with two buffers reused for the whole file:
 * the next read runs in the thread pool while this chunk is hashed, and
 * nothing is allocated per chunk (memory stays flat whatever the file size).
 */
async function feed(update: (bytes: Buffer) => void, source: MessageSource): Promise<void> {
  if (Buffer.isBuffer(source)) {
    update(source);
    return;
  }
  const handle = await open(source.file, "r");
  let pending: ReturnType<typeof handle.read> | undefined;
  try {
    const buffers = [Buffer.allocUnsafe(READ_CHUNK), Buffer.allocUnsafe(READ_CHUNK)];
    let position = 0;
    let turn = 0;
    pending = handle.read(buffers[0]!, 0, READ_CHUNK, position);
    for (;;) {
      const { bytesRead } = await pending;
      if (bytesRead === 0) break;
      const current = buffers[turn]!;
      position += bytesRead;
      turn ^= 1;
      pending = handle.read(buffers[turn]!, 0, READ_CHUNK, position);
      update(current.subarray(0, bytesRead));
    }
  } finally {
    await pending?.catch(() => undefined);
    await handle.close();
  }
}

function modL(hash: Uint8Array): bigint {
  return littleEndian(hash) % L;
}

/**
 * A signature whose first pass (the nonce hash, SHA-512 of prefix ‖ message)
 * is fed while the message is produced, e.g. by the zip writer as it writes;
 * `finish` then makes the second pass over the finished file. The result is
 * the same signature as `signEd25519` over the same bytes.
 */
export interface StreamingSignature {
  update(bytes: Uint8Array): void;
  /** Reads the message once (the challenge hash) and signs; `verified` checks the result against the key's public key with that same hash. */
  finish(message: MessageSource): Promise<{ signature: Buffer; verified: boolean }>;
}

/** The two passes of a signature; the challenge `k` is kept so a caller that wants the self-check can make it without a third pass. */
function nonceSigner(key: ExpandedKey): { update(bytes: Uint8Array): void; sign(message: MessageSource): Promise<{ signature: Buffer; k: bigint }> } {
  const nonceHash = createHash("sha512").update(key.prefix);
  return {
    update: (bytes) => void nonceHash.update(bytes),
    async sign(message) {
      const r = modL(nonceHash.digest());
      const R = Buffer.from(Point.BASE.multiply(r === 0n ? L : r).toBytes());
      const challengeHash = createHash("sha512").update(R).update(key.publicKey);
      await feed((b) => challengeHash.update(b), message);
      const k = modL(challengeHash.digest());
      const s = (r + k * (key.scalar % L)) % L;
      return { signature: Buffer.concat([R, toLittleEndian32(s)]), k };
    },
  };
}

export function startSignature(key: ExpandedKey): StreamingSignature {
  const signer = nonceSigner(key);
  return {
    update: signer.update,
    async finish(message) {
      const { signature, k } = await signer.sign(message);
      return { signature, verified: verifyWithChallenge(key.publicKey, signature, k) };
    },
  };
}

/** Signs, feeding the first pass here unless `started` was fed it already; `verified` as in `finish`. */
export async function signAndCheck(key: ExpandedKey, message: MessageSource, started?: StreamingSignature): Promise<{ signature: Buffer; verified: boolean }> {
  const signing = started ?? startSignature(key);
  if (!started) await feed((b) => signing.update(b), message);
  return signing.finish(message);
}

/**
 * The signature alone, without the self-check (two JS point multiplications,
 * 20-40 ms in a fresh process): `relcast sign`, deltas and feed pages use
 * the signature as it is, and publish's zip goes through `signAndCheck`.
 */
export async function signEd25519(key: ExpandedKey, message: MessageSource): Promise<Buffer> {
  const signer = nonceSigner(key);
  await feed(signer.update, message);
  return (await signer.sign(message)).signature;
}

/** The verification equation [S]B = R + [k]A for a challenge k already hashed from R ‖ A ‖ message. */
function verifyWithChallenge(publicKey: Uint8Array, signature: Uint8Array, k: bigint): boolean {
  let A, R;
  try {
    A = Point.fromBytes(publicKey);
    R = Point.fromBytes(signature.subarray(0, 32));
  } catch {
    return false;
  }
  const s = littleEndian(signature.subarray(32));
  if (s >= L) return false;
  return Point.BASE.multiplyUnsafe(s).equals(R.add(A.multiplyUnsafe(k)));
}

/** RFC 8032 verification (cofactorless, canonical S), streaming the message once. */
export async function verifyEd25519(publicKey: Uint8Array, signature: Uint8Array, message: MessageSource): Promise<boolean> {
  if (publicKey.length !== 32 || signature.length !== 64) return false;
  const challengeHash = createHash("sha512").update(signature.subarray(0, 32)).update(publicKey);
  await feed((b) => challengeHash.update(b), message);
  return verifyWithChallenge(publicKey, signature, modL(challengeHash.digest()));
}

/** What a verifier hashes before the message: R (the signature's first half) ‖ A (the public key). */
export function challengePrefix(publicKey: Uint8Array, signature: Uint8Array): Buffer {
  return Buffer.concat([signature.subarray(0, 32), publicKey]);
}

/**
 * RFC 8032 verification when the challenge hash, SHA-512(challengePrefix ‖
 * message), was computed elsewhere (e.g. while the message was downloaded).
 */
export function verifyEd25519Challenge(publicKey: Uint8Array, signature: Uint8Array, challengeHash: Uint8Array): boolean {
  if (publicKey.length !== 32 || signature.length !== 64 || challengeHash.length !== 64) return false;
  return verifyWithChallenge(publicKey, signature, modL(challengeHash));
}

const SPKI_ED25519_PREFIX = Buffer.from("302a300506032b6570032100", "hex");

/**
 * RFC 8032 verification of a message held in memory by OpenSSL, on libuv's
 * thread pool (so several run at once on every core, and the main thread
 * does no curve arithmetic). False for a malformed key or signature.
 */
export async function verifyEd25519Buffered(publicKey: Uint8Array, signature: Uint8Array, message: Uint8Array): Promise<boolean> {
  if (publicKey.length !== 32 || signature.length !== 64) return false;
  const key = publicKeyObject(publicKey);
  if (!key) return false;
  return new Promise((resolve) => cryptoVerify(null, message, key, signature, (err, ok) => resolve(!err && ok)));
}

// The last public key's OpenSSL object: verify checks hundreds of zips against one key.
let lastKey: { bytes: Buffer; key: KeyObject | undefined } | undefined;

function publicKeyObject(publicKey: Uint8Array): KeyObject | undefined {
  if (lastKey?.bytes.equals(publicKey)) return lastKey.key;
  let key: KeyObject | undefined;
  try {
    key = createPublicKey({ key: Buffer.concat([SPKI_ED25519_PREFIX, publicKey]), format: "der", type: "spki" });
  } catch {
    key = undefined;
  }
  lastKey = { bytes: Buffer.from(publicKey), key };
  return key;
}
