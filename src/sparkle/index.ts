/**
 * `relcast/sparkle`: Sparkle's EdDSA signatures and version order as a
 * library. Signatures equal those of Sparkle's `sign_update` (and openssl)
 * byte for byte; files are streamed, so any size signs in flat memory.
 */
import { signEd25519, verifyEd25519 } from "./ed25519-stream.js";
import { parseSigningKey, type SigningKey } from "./signing-key.js";

export { compareSparkleVersions, type Ordering } from "./version-comparator.js";
export { generateSigningKey, type GeneratedKey } from "./key-generation.js";
export { parseSigningKey, loadSigningKey, KEY_ENV, type SigningKey } from "./signing-key.js";

/** What to sign or check: bytes in memory, or a file path (streamed). */
export type SignInput = Uint8Array | { file: string };

function message(input: SignInput): Buffer | { file: string } {
  return input instanceof Uint8Array ? Buffer.from(input.buffer, input.byteOffset, input.byteLength) : { file: input.file };
}

/**
 * The base64 `sparkle:edSignature` of `input`. `key` is a parsed key or the
 * base64 text `generate_keys -x` / `relcast keys generate` writes.
 */
export async function sign(input: SignInput, key: SigningKey | string): Promise<string> {
  const signingKey = typeof key === "string" ? parseSigningKey(key, "the key argument") : key;
  return (await signEd25519(signingKey, message(input))).toString("base64");
}

/**
 * True when `signature` (base64, as the appcast has it) is a valid Ed25519
 * signature of `input` under `publicKey` (base64 `SUPublicEDKey`). Malformed
 * values are simply not valid.
 */
export async function verify(input: SignInput, signature: string, publicKey: string): Promise<boolean> {
  const decode = (text: string, bytes: number) => {
    const raw = /^[A-Za-z0-9+/]+={0,2}$/.test(text) ? Buffer.from(text, "base64") : Buffer.alloc(0);
    return raw.length === bytes ? raw : undefined;
  };
  const sig = decode(signature, 64);
  const pub = decode(publicKey, 32);
  if (!sig || !pub) return false;
  return verifyEd25519(pub, sig, message(input));
}
