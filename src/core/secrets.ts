/**
 * Every secret the process learns is registered here; every line the process
 * prints or logs passes through `maskSecrets`. Keys appear in more than one
 * encoding (base64 seed, raw hex), so each registered secret is masked in all
 * of the encodings we can derive from it.
 */
const secrets = new Set<string>();
const listeners: Array<(value: string) => void> = [];

function add(value: string): void {
  if (secrets.has(value)) return;
  secrets.add(value);
  for (const listener of listeners) listener(value);
}

export function registerSecret(value: string | undefined | null): void {
  if (!value) return;
  const trimmed = value.trim();
  if (trimmed.length < 6) return;
  add(trimmed);
  const decoded = Buffer.from(trimmed, "base64");
  if (decoded.length >= 16 && decoded.toString("base64") === trimmed) {
    add(decoded.toString("hex"));
    add(decoded.toString("base64url"));
  }
}

/**
 * Called with every secret (and each derived encoding) as it is registered,
 * and at once with those registered earlier: the CLI uses it to ask a CI
 * runner to mask the value before anything else is printed.
 */
export function onSecretRegistered(listener: (value: string) => void): void {
  listeners.push(listener);
  for (const value of secrets) listener(value);
}

export function registeredSecrets(): readonly string[] {
  return [...secrets];
}

export function maskSecrets(text: string): string {
  let out = text;
  for (const s of secrets) {
    if (out.includes(s)) out = out.split(s).join("***");
  }
  return out;
}

/**
 * True when a value decodes as a signing key in the forms relcast reads:
 * base64 (or base64url) of 32 bytes (a seed) or 96 (Sparkle's legacy
 * export), or hex of a 32-byte seed. (64 bytes is left out: that is the size
 * of a signature, which `sign --verify` takes as an argument.)
 */
export function looksLikeKey(value: string): boolean {
  const v = value.trim();
  if (/^[0-9a-fA-F]{64}$/.test(v)) return true;
  if (!/^[A-Za-z0-9+/_-]+={0,2}$/.test(v) || v.length < 40) return false;
  const bytes = Buffer.from(v.replace(/-/g, "+").replace(/_/g, "/"), "base64").length;
  return bytes === 32 || bytes === 96;
}

/** Flags whose values are public keys: shown, not masked. */
const PUBLIC_KEY_FLAGS = new Set(["--public-key"]);

/**
 * Registers every command-line value that looks like a key as a secret,
 * before anything is parsed or printed: a key pasted where a path belongs
 * (or into any other flag) is masked in every message, log and stack trace.
 */
export function registerKeyShapedArguments(argv: readonly string[]): void {
  for (const [i, arg] of argv.entries()) {
    const eq = arg.startsWith("--") ? arg.indexOf("=") : -1;
    const flag = eq > 0 ? arg.slice(0, eq) : argv[i - 1];
    const value = eq > 0 ? arg.slice(eq + 1) : arg;
    if (flag !== undefined && PUBLIC_KEY_FLAGS.has(flag)) continue;
    if (!looksLikeKey(value)) continue;
    registerSecret(value);
    if (/^[0-9a-fA-F]{64}$/.test(value.trim())) registerSecret(Buffer.from(value.trim(), "hex").toString("base64"));
  }
}
