/**
 * Scopes are space-separated tokens (RFC 6749 §3.3); order and repetition do
 * not matter, so scopes are compared as sets. Scope names are `<product>`
 * (any method on the product's routes) and `<product>:read` (GET and HEAD only).
 */
export const SCOPE_TOKEN_PATTERN = /^[\x21\x23-\x5B\x5D-\x7E]+$/;

export function parseScope(text: string): string[] | undefined {
  const parts = text.split(" ").filter((p) => p.length > 0);
  if (parts.length === 0) return undefined;
  if (!parts.every((p) => SCOPE_TOKEN_PATTERN.test(p))) return undefined;
  return [...new Set(parts)].sort();
}

export function formatScope(scopes: readonly string[]): string {
  return [...new Set(scopes)].sort().join(" ");
}

export function sameScope(a: readonly string[], b: readonly string[]): boolean {
  return formatScope(a) === formatScope(b);
}

export function isSubset(requested: readonly string[], allowed: readonly string[]): boolean {
  const set = new Set(allowed);
  return requested.every((s) => set.has(s));
}

const READ_METHODS = new Set(["GET", "HEAD"]);

export function scopeCoversProduct(scopes: readonly string[], product: string, method: string): boolean {
  if (scopes.includes(product)) return true;
  return READ_METHODS.has(method.toUpperCase()) && scopes.includes(`${product}:read`);
}

/** The product a scope name refers to (`crm:read` → `crm`). */
export function scopeProduct(scope: string): string {
  return scope.endsWith(":read") ? scope.slice(0, -":read".length) : scope;
}
