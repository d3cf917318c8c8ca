import { RelcastError } from "../core/errors.js";

/**
 * The `args` input as a list of arguments, split the way a shell splits
 * words (spaces and newlines separate; '…' and "…" quote; \ escapes outside
 * single quotes), with no expansion of any kind: `$HOME` stays `$HOME`.
 */
export function splitArgs(text: string): string[] {
  const args: string[] = [];
  let current = "";
  let inWord = false;
  let quote: "'" | '"' | undefined;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quote === "'") {
      if (c === "'") quote = undefined;
      else current += c;
    } else if (quote === '"') {
      if (c === '"') quote = undefined;
      else if (c === "\\" && (text[i + 1] === '"' || text[i + 1] === "\\")) current += text[++i];
      else current += c;
    } else if (c === "'" || c === '"') {
      quote = c;
      inWord = true;
    } else if (c === "\\" && i + 1 < text.length) {
      current += text[++i];
      inWord = true;
    } else if (/\s/.test(c)) {
      if (inWord) args.push(current);
      current = "";
      inWord = false;
    } else {
      current += c;
      inWord = true;
    }
  }
  if (quote) throw new RelcastError("E_USAGE", `the args input has an unclosed ${quote} quote`, "close the quote, e.g. args: --summary \"Faster sync\"");
  if (inWord) args.push(current);
  return args;
}
