/**
 * `plain-string` of spec §5.2: printable ASCII except DQUOTE and backslash,
 * so values never need escaping and a parser never has to guess where a
 * value ends (Kong's greedy `"(.+)"` regex does guess).
 */
export function isPlainStringChar(code: number): boolean {
  return (code >= 0x20 && code <= 0x7e) && code !== 0x22 && code !== 0x5c;
}

/** Index of the first character not allowed in a plain-string, or -1. */
export function firstNonPlainChar(value: string): number {
  for (let i = 0; i < value.length; i++) {
    if (!isPlainStringChar(value.charCodeAt(i))) return i;
  }
  return -1;
}

/** A short, printable rendering of untrusted text for error messages. */
export function quoteForMessage(value: string, max = 60): string {
  const cut = value.length > max ? `${value.slice(0, max)}…` : value;
  return JSON.stringify(cut).replace(/[\u0080-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}

export function describeChar(value: string, index: number): string {
  const code = value.charCodeAt(index);
  const hex = `U+${code.toString(16).toUpperCase().padStart(4, "0")}`;
  if (code === 0x20) return "a space";
  if (code === 0x09) return "a tab";
  if (code === 0x22) return "a double quote (\")";
  if (code === 0x5c) return "a backslash (quoted-pair escapes are not part of the grammar)";
  if (code > 0x7e) return `the non-ASCII character ${hex}`;
  return `the control character ${hex}`;
}
