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
