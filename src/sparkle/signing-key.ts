import { createPrivateKey, createPublicKey } from "node:crypto";
import { access, readFile } from "node:fs/promises";
import { RelcastError } from "../core/errors.js";
import { looksLikeKey, registerSecret } from "../core/secrets.js";
import { derivePublicKey, expandSeed, fromExpandedSecret, type ExpandedKey } from "./ed25519-stream.js";
import { readStdin } from "../core/read-stdin.js";

export const KEY_ENV = "RELCAST_SIGNING_KEY";

export interface SigningKey extends ExpandedKey {
  /** Where it came from, for messages (never the value). */
  source: string;
  publicKeyBase64: string;
}

const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;

/**
 * Parses a key in either format Sparkle's `generate_keys -x` has written:
 * base64 of the 32-byte seed (current), or of 96 bytes (legacy: 64-byte
 * expanded secret + 32-byte public key).
 */
export function parseSigningKey(text: string, source: string): SigningKey {
  const trimmed = text.trim();
  registerSecret(trimmed);
  if (trimmed.length === 0) {
    throw new RelcastError("E_KEY", `signing key from ${source} is empty`, "export it with Sparkle's `generate_keys -x <file>` or `relcast keys generate`");
  }
  if (/^-----BEGIN [A-Z0-9 ]+-----/.test(trimmed)) throw pemKeyError(trimmed, source);
  const compact = trimmed.replace(/\s+/g, "");
  if (!BASE64.test(compact) || compact.length % 4 !== 0) {
    throw new RelcastError("E_KEY", `signing key from ${source} is not valid base64`, "the key file must hold only the base64 text that `generate_keys -x` writes");
  }
  const bytes = Buffer.from(compact, "base64");
  let key: ExpandedKey;
  if (bytes.length === 32) {
    key = expandSeed(bytes);
  } else if (bytes.length === 96) {
    key = fromExpandedSecret(bytes.subarray(0, 64), bytes.subarray(64));
    if (!derivePublicKey(key).equals(key.publicKey)) {
      throw new RelcastError("E_KEY", `legacy 96-byte signing key from ${source} is inconsistent: its public half does not match its secret half`, "re-export the key with Sparkle's `generate_keys -x`");
    }
  } else {
    throw new RelcastError(
      "E_KEY",
      `signing key from ${source} decodes to ${bytes.length} bytes; expected 32 (seed) or 96 (legacy expanded key + public key)`,
      "use the file written by Sparkle's `generate_keys -x` or `relcast keys generate`",
    );
  }
  const publicKeyBase64 = key.publicKey.toString("base64");
  return { ...key, source, publicKeyBase64 };
}

/** The command that turns a PEM (PKCS#8) Ed25519 private key into the base64 seed: the seed is the last 32 bytes of its DER form. */
export const PEM_TO_SEED_COMMAND = "openssl pkey -in key.pem -outform DER | tail -c 32 | base64 > key.txt";

/**
 * A PEM file where the base64 seed belongs (an OpenSSL or cloud key
 * manager's export): says what kind of key it is and, for an Ed25519
 * private key, the command that converts it. The key is never echoed.
 */
function pemKeyError(pem: string, source: string): RelcastError {
  const label = /^-----BEGIN ([A-Z0-9 ]+)-----/.exec(pem)![1]!;
  let kind: string | undefined;
  try {
    kind = createPrivateKey(pem).asymmetricKeyType;
  } catch {
    try {
      createPublicKey(pem);
      return new RelcastError("E_KEY", `signing key from ${source} is a PEM public key (${label}); signing needs the private key`, "pass the private key: the base64 seed from Sparkle's `generate_keys -x` or `relcast keys generate`");
    } catch {
      kind = undefined;
    }
  }
  if (kind === "ed25519") {
    return new RelcastError(
      "E_KEY",
      `signing key from ${source} is a PEM file (${label}); relcast and Sparkle read the base64 seed of the Ed25519 key instead`,
      `convert it once: ${PEM_TO_SEED_COMMAND} (key.pem is this file), then use key.txt`,
    );
  }
  return new RelcastError(
    "E_KEY",
    `signing key from ${source} is a PEM file (${label}) holding ${kind ? `an ${kind.toUpperCase()} key` : "no key relcast can read"}; Sparkle signs only with Ed25519`,
    "create an Ed25519 key with `relcast keys generate --out key.txt` (or Sparkle's `generate_keys -x key.txt`) and put its public key into SUPublicEDKey",
  );
}

/** `--key-file` wins (`-` reads the key from stdin, as `sign_update -f -` does) over the environment variable. */
export async function loadSigningKey(keyFile: string | undefined, env: NodeJS.ProcessEnv = process.env): Promise<SigningKey> {
  if (keyFile) {
    if (keyFile !== "-" && looksLikeKey(keyFile) && !(await access(keyFile).then(() => true, () => false))) {
      registerSecret(keyFile);
      throw new RelcastError(
        "E_KEY",
        "the --key-file value looks like a key itself, not the path of a key file (the value is not shown)",
        `write the key to a file and pass its path (--key-file signing.key), pipe it in with --key-file -, or set ${KEY_ENV}; a key typed on the command line may be in your shell history: consider it exposed and rotate it`,
      );
    }
    let text: string;
    try {
      text = keyFile === "-" ? await readStdin() : await readFile(keyFile, "utf8");
    } catch (err) {
      throw new RelcastError("E_KEY", `cannot read key file ${keyFile} (${(err as NodeJS.ErrnoException).code})`, "pass --key-file <path to the base64 key> or set RELCAST_SIGNING_KEY");
    }
    return parseSigningKey(text, `key file ${keyFile}`);
  }
  const fromEnv = env[KEY_ENV];
  if (fromEnv !== undefined && fromEnv.trim() !== "") return parseSigningKey(fromEnv, `$${KEY_ENV}`);
  throw new RelcastError("E_KEY", "no signing key given", `pass --key-file <file> or set ${KEY_ENV} to the base64 Ed25519 key`);
}

/** The key when one is given (`--key-file`, or the environment variable); undefined when neither is: for commands that need it only for a signed appcast. */
export async function loadOptionalSigningKey(keyFile: string | undefined, env: NodeJS.ProcessEnv = process.env): Promise<SigningKey | undefined> {
  if (keyFile === undefined && (env[KEY_ENV] === undefined || env[KEY_ENV]!.trim() === "")) return undefined;
  return loadSigningKey(keyFile, env);
}
