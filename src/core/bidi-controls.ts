/**
 * Unicode bidirectional embedding, override and isolate controls (U+202A-U+202E,
 * U+2066-U+2069). XML allows them, but in a name, summary or yank reason they
 * reorder what users see (the "Trojan Source" trick: U+202E shows
 * "exe.txt" for "txt.exe"), in Sparkle's update window, the pages and the
 * logs alike. The marks U+200E/U+200F that right-to-left text needs stay allowed.
 */
const BIDI_CONTROL = /[\u202a-\u202e\u2066-\u2069]/;

const NAMES: Record<number, string> = {
  0x202a: "LEFT-TO-RIGHT EMBEDDING", 0x202b: "RIGHT-TO-LEFT EMBEDDING", 0x202c: "POP DIRECTIONAL FORMATTING",
  0x202d: "LEFT-TO-RIGHT OVERRIDE", 0x202e: "RIGHT-TO-LEFT OVERRIDE", 0x2066: "LEFT-TO-RIGHT ISOLATE",
  0x2067: "RIGHT-TO-LEFT ISOLATE", 0x2068: "FIRST STRONG ISOLATE", 0x2069: "POP DIRECTIONAL ISOLATE",
};

/** One sentence naming the first bidi control and where it is, or undefined when there is none. */
export function bidiControlProblem(text: string): string | undefined {
  const found = BIDI_CONTROL.exec(text);
  if (!found) return undefined;
  const cp = found[0].codePointAt(0)!;
  return `character U+${cp.toString(16).toUpperCase()} (${NAMES[cp]}) at position ${found.index + 1} is a bidirectional control that makes the text display in another order than it is written`;
}
