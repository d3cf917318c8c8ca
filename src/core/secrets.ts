/**
 * Every secret the process learns is registered here; every line the process
 * prints or logs passes through `maskSecrets`. Keys appear in more than one
 * encoding (base64 seed, raw hex), so each registered secret is masked in all
 * of the encodings we can derive from it.
 */
const secrets = new Set<string>();

export function registerSecret(value: string | undefined | null): void {
  if (!value) return;
  const trimmed = value.trim();
  if (trimmed.length < 6) return;
  secrets.add(trimmed);
  const decoded = Buffer.from(trimmed, "base64");
  if (decoded.length >= 16 && decoded.toString("base64") === trimmed) {
    secrets.add(decoded.toString("hex"));
    secrets.add(decoded.toString("base64url"));
  }
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
