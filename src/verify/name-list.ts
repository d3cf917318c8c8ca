import { quotedFolder } from "../domain/record-keys.js";

/** Names a human report quotes in one line before it counts the rest. */
export const NAMES_SHOWN = 4;

/**
 * The names of an inventory finding, quoted, in one line: the first few and
 * how many more for the human report, every one of them when `all` (the
 * `--json` report, which a script reads to act on each object).
 */
export function shownNames(names: readonly string[], all: boolean): string {
  const cut = all ? names : names.slice(0, NAMES_SHOWN);
  return cut.map((n) => quotedFolder(n)).join(", ") + (names.length > cut.length ? ` and ${names.length - cut.length} more` : "");
}
