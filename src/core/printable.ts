/**
 * Text read from outside (store keys and listings, link targets, record
 * fields) printed to a terminal or a CI log. Control characters (C0, DEL,
 * C1: ESC sequences recolour or rewrite the terminal, a newline starts a new
 * line that GitHub Actions runs as a workflow command such as `::error::` or
 * `::stop-commands::`) and format characters (bidi overrides, zero-width
 * characters) are shown as escapes instead: `\n`, `\x1b`, `\u{202E}`.
 * `keepNewlines` leaves line breaks alone for text whose lines are our own;
 * then a line that starts with `::` shows its first colon as `\x3a`.
 */
const UNPRINTABLE = /[\p{Cc}\p{Cf}\u2028\u2029]/gu;
const UNPRINTABLE_BUT_NEWLINE = /[\0-\x09\x0b-\x1f\x7f-\x9f\p{Cf}\u2028\u2029]/gu;

const NAMED: Record<string, string> = { "\n": "\\n", "\r": "\\r", "\t": "\\t" };

function escapeOne(char: string): string {
  const named = NAMED[char];
  if (named) return named;
  const cp = char.codePointAt(0)!;
  return cp <= 0xff ? `\\x${cp.toString(16).padStart(2, "0")}` : `\\u{${cp.toString(16).toUpperCase()}}`;
}

export function printable(text: string, options: { keepNewlines?: boolean } = {}): string {
  if (!options.keepNewlines) return text.replace(UNPRINTABLE, escapeOne);
  // Lines are kept, so a line must not start as a workflow command does (GitHub's runner trims spaces first).
  return text.replace(UNPRINTABLE_BUT_NEWLINE, escapeOne).replace(/(^|\n)([ ]*)::/g, "$1$2\\x3a:");
}
