/**
 * Unicode bidirectional controls: the embeddings, overrides and isolates
 * (U+202A-U+202E, U+2066-U+2069) and the invisible marks (U+200E LEFT-TO-RIGHT
 * MARK, U+200F RIGHT-TO-LEFT MARK, U+061C ARABIC LETTER MARK). XML allows
 * them, but they reorder what users see: an override shows "exe.txt" for
 * "txt.exe" (the "Trojan Source" trick), and a mark alone moves the digits,
 * dots and spaces next to it into another order, so a name, a
 * summary, a yank reason or the notes could show another version than they
 * say, in Sparkle's update window, the pages and the logs alike.
 * Right-to-left text needs none of them to show in its own direction: the
 * Unicode algorithm orders Hebrew and Arabic letters without marks.
 */
const BIDI_CONTROL = /[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/;

const NAMES: Record<number, string> = {
  0x061c: "ARABIC LETTER MARK", 0x200e: "LEFT-TO-RIGHT MARK", 0x200f: "RIGHT-TO-LEFT MARK",
  0x202a: "LEFT-TO-RIGHT EMBEDDING", 0x202b: "RIGHT-TO-LEFT EMBEDDING", 0x202c: "POP DIRECTIONAL FORMATTING",
  0x202d: "LEFT-TO-RIGHT OVERRIDE", 0x202e: "RIGHT-TO-LEFT OVERRIDE", 0x2066: "LEFT-TO-RIGHT ISOLATE",
  0x2067: "RIGHT-TO-LEFT ISOLATE", 0x2068: "FIRST STRONG ISOLATE", 0x2069: "POP DIRECTIONAL ISOLATE",
};

const WHY = "is a bidirectional control that makes the text display in another order than it is written";

/** `U+202E (RIGHT-TO-LEFT OVERRIDE)`. */
function named(cp: number): string {
  return `U+${cp.toString(16).toUpperCase().padStart(4, "0")} (${NAMES[cp]})`;
}

/** One sentence naming the first bidi control and where it is, or undefined when there is none. */
export function bidiControlProblem(text: string): string | undefined {
  const found = BIDI_CONTROL.exec(text);
  if (!found) return undefined;
  return `character ${named(found[0].codePointAt(0)!)} at position ${found.index + 1} ${WHY}`;
}

/**
 * As bidiControlProblem, without the position: for text rendered from what
 * the user wrote (Markdown turned into HTML), whose positions are not theirs.
 */
export function bidiControlInRendered(text: string): string | undefined {
  const found = BIDI_CONTROL.exec(text);
  return found ? `character ${named(found[0].codePointAt(0)!)} ${WHY}` : undefined;
}

/**
 * The first bidi control of a text file's contents by line and column (columns
 * count characters, from 1), as a sentence, or undefined when there is none.
 */
export function bidiControlInFile(text: string): { line: number; column: number; problem: string } | undefined {
  const found = BIDI_CONTROL.exec(text);
  if (!found) return undefined;
  const before = text.slice(0, found.index);
  const line = before.split("\n").length;
  const column = [...before.slice(before.lastIndexOf("\n") + 1)].length + 1;
  return { line, column, problem: `line ${line}, column ${column}: character ${named(found[0].codePointAt(0)!)} ${WHY}` };
}

/**
 * How a text file can spell a bidi control in ASCII that Markdown turns into
 * the character: a character reference, decimal or hex (`&#x202E;`,
 * `&#8238;`) or named (`&rlm;`, `&lrm;`), or its UTF-8 percent-encoded in a
 * URL (an autolink's text shows it decoded: `%E2%80%AE`).
 */
const ENCODED_BIDI = new RegExp(
  [
    "&#[xX]0*(?:200[eEfF]|61[cC]|202[a-eA-E]|206[6-9]);",
    "&#0*(?:8206|8207|1564|823[4-8]|829[4-7]);",
    "&(?:lrm|rlm);",
    "%[eE]2%80%(?:8[eEfF]|[aA][a-eA-E])|%[eE]2%81%[aA][6-9]|%[dD]8%9[cC]",
  ].join("|"),
  "g",
);

/**
 * Where a file spells a bidi control that only appears once its Markdown is
 * rendered (see {@link ENCODED_BIDI}): the first spelling whose line renders
 * as one (`rendersControl`, given that line alone), else the first spelling
 * at all; line and column count from 1 (columns in characters). Undefined
 * when the file has no such spelling (the caller then names the file alone).
 */
export function encodedBidiInFile(text: string, rendersControl: (line: string) => boolean): { line: number; column: number; spelled: string } | undefined {
  let first: { line: number; column: number; spelled: string } | undefined;
  for (const m of text.matchAll(ENCODED_BIDI)) {
    const start = text.lastIndexOf("\n", m.index - 1) + 1;
    const end = text.indexOf("\n", m.index);
    const at = { line: text.slice(0, m.index).split("\n").length, column: [...text.slice(start, m.index)].length + 1, spelled: m[0] };
    if (rendersControl(text.slice(start, end === -1 ? undefined : end))) return at;
    first ??= at;
  }
  return first;
}
