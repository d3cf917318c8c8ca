import { RelcastError } from "./errors.js";
import { bidiControlProblem } from "./bidi-controls.js";

/**
 * The characters XML 1.0 allows (§2.2 Char): tab, LF, CR, U+0020–U+D7FF,
 * U+E000–U+FFFD and U+10000–U+10FFFF. Anything else (escape sequences, NUL,
 * vertical tab, lone surrogates, U+FFFE/U+FFFF) makes a feed that no XML
 * parser reads, so every text that reaches appcast, catalog or pages is
 * checked with this before it is written.
 */
export interface IllegalXmlChar {
  /** 1-based line and column (in characters) of the first illegal character. */
  line: number;
  column: number;
  codePoint: number;
}

function isXmlChar(cp: number): boolean {
  return cp === 0x9 || cp === 0xa || cp === 0xd || (cp >= 0x20 && cp <= 0xd7ff) || (cp >= 0xe000 && cp <= 0xfffd) || (cp >= 0x10000 && cp <= 0x10ffff);
}

const MAYBE_ILLEGAL = /[^\t\n\r\u0020-\ud7ff\ue000-\ufffd]/;

export function firstIllegalXmlChar(text: string): IllegalXmlChar | undefined {
  if (!MAYBE_ILLEGAL.test(text)) return undefined;
  let line = 1;
  let column = 0;
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    let cp = unit;
    if (unit >= 0xd800 && unit <= 0xdbff) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) cp = 0x10000 + ((unit - 0xd800) << 10) + (next - 0xdc00);
    }
    column++;
    if (!isXmlChar(cp)) return { line, column, codePoint: cp };
    if (cp > 0xffff) i++;
    if (unit === 0x0a) {
      line++;
      column = 0;
    }
  }
  return undefined;
}

/** `U+001B`: how messages name a character. */
export function codePointName(cp: number): string {
  return `U+${cp.toString(16).toUpperCase().padStart(4, "0")}`;
}

/** One sentence naming where the character is, or undefined when the text is legal XML. */
export function xmlTextProblem(text: string): string | undefined {
  const bad = firstIllegalXmlChar(text);
  if (!bad) return undefined;
  return `line ${bad.line}, column ${bad.column}: character ${codePointName(bad.codePoint)} is not allowed in XML 1.0`;
}

/**
 * The first byte offset at which `bytes` stop being well-formed UTF-8 (RFC
 * 3629: no overlong forms, no surrogates, nothing above U+10FFFF), with its
 * line and column, or undefined when every byte is fine.
 */
export function firstInvalidUtf8(bytes: Uint8Array): { offset: number; line: number; column: number; byte: number } | undefined {
  let line = 1;
  let column = 0;
  let i = 0;
  while (i < bytes.length) {
    const b = bytes[i]!;
    let need = 0;
    let min = 0;
    if (b < 0x80) need = 0;
    else if (b >= 0xc2 && b <= 0xdf) (need = 1), (min = 0x80);
    else if (b >= 0xe0 && b <= 0xef) (need = 2), (min = 0x800);
    else if (b >= 0xf0 && b <= 0xf4) (need = 3), (min = 0x10000);
    else return { offset: i, line, column: column + 1, byte: b };
    let cp = need === 0 ? b : b & (0x3f >> need);
    for (let k = 1; k <= need; k++) {
      const c = bytes[i + k];
      if (c === undefined || (c & 0xc0) !== 0x80) return { offset: i, line, column: column + 1, byte: b };
      cp = (cp << 6) | (c & 0x3f);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return { offset: i, line, column: column + 1, byte: b };
    column++;
    if (b === 0x0a) {
      line++;
      column = 0;
    }
    i += need + 1;
  }
  return undefined;
}

/**
 * Refuses (E_INPUT) a value given on the command line that XML cannot hold, or
 * that carries a bidirectional override or isolate, naming the flag, position and character.
 */
export function requireXmlText(value: string, what: string): string {
  const bidi = bidiControlProblem(value);
  if (bidi) throw new RelcastError("E_INPUT", `${what}: ${bidi}`, `remove the character from ${what} and run again`);
  const bad = firstIllegalXmlChar(value);
  if (!bad) return value;
  throw new RelcastError(
    "E_INPUT",
    `${what}: line ${bad.line}, column ${bad.column}: character ${codePointName(bad.codePoint)} is not allowed in XML 1.0 (the appcast would stop parsing for every installed copy)`,
    `remove the control character from ${what} and run again`,
  );
}
