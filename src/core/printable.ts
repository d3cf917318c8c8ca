/**
 * Text read from outside (store keys and listings, link targets, record
 * fields) printed to a terminal or a CI log. Control characters (C0, DEL,
 * C1: ESC sequences recolour or rewrite the terminal, a newline starts a new
 * line that GitHub Actions runs as a workflow command such as `::error::` or
 * `::stop-commands::`) and format characters (bidi overrides, zero-width
 * characters) are shown as escapes instead: `\n`, `\x1b`, `\u{202E}`.
 * `keepNewlines` leaves line breaks alone for text whose lines are our own.
 *
 * GitHub's runner also reads a line as a command when it starts with `::`
 * after any white space it trims (.NET's TrimStart: no-break and ideographic
 * spaces too), and anywhere it holds the older `##[command]` form. So a
 * (line) start of `::` after any white space shows its first colon as
 * `\x3a`, and every `##[` shows as `#\x23[`.
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

/** `::` at the text's or a line's start after white space other than a newline (which the runner trims before it looks). */
const COMMAND_AT_LINE_START = /(^|\n)([^\S\n]*)::/g;
const LEGACY_COMMAND = /##\[/g;

export function printable(text: string, options: { keepNewlines?: boolean } = {}): string {
  const escaped = text.replace(options.keepNewlines ? UNPRINTABLE_BUT_NEWLINE : UNPRINTABLE, escapeOne);
  return escaped.replace(COMMAND_AT_LINE_START, "$1$2\\x3a:").replace(LEGACY_COMMAND, "#\\x23[");
}

// What JSON.stringify leaves raw but a terminal or CI log would act on or hide: DEL and C1 controls, format
// characters (bidi overrides, zero-width ones, tags) and the line and paragraph separators.
const JSON_UNPRINTABLE = /[\x7f-\x9f\p{Cf}\u2028\u2029]/gu;

/** `\uXXXX` (a surrogate pair above U+FFFF): the JSON escape of one character. */
function jsonEscape(char: string): string {
  let out = "";
  for (let i = 0; i < char.length; i++) out += `\\u${char.charCodeAt(i).toString(16).toUpperCase().padStart(4, "0")}`;
  return out;
}

/**
 * JSON for a terminal or CI log (`--json`): as JSON.stringify, which escapes
 * C0 controls only, with every other character {@link printable} escapes
 * written as a JSON escape too, so a tampered page or record shows
 * `\u202E` instead of reordering the line. GitHub's older `##[command]`
 * form, which its runner reads anywhere in a line, shows as `#\u0023[`.
 * (A `::` command needs the line's start, where JSON has only indentation,
 * a quote or a bracket.) A JSON parser reads back exactly the same value.
 * (Outside strings JSON.stringify writes only ASCII.)
 */
export function printableJson(value: unknown, indent?: number): string {
  return JSON.stringify(value, null, indent).replace(JSON_UNPRINTABLE, jsonEscape).replace(LEGACY_COMMAND, "#\\u0023[");
}
