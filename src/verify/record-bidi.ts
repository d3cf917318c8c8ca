import { bidiControlInRendered, bidiControlProblem } from "../core/bidi-controls.js";
import { renderNotesHtml } from "../domain/notes/markdown.js";
import type { ReleaseRecord } from "../domain/record-schema.js";

/** Every string of `value` with its dotted path (`releaseNotes.2`, `autoupdate.title`). */
function* strings(value: unknown, at: string): Generator<[string, string]> {
  if (typeof value === "string") yield [at, value];
  else if (Array.isArray(value)) for (const [i, v] of value.entries()) yield* strings(v, at ? `${at}.${i}` : String(i));
  else if (value && typeof value === "object") for (const [k, v] of Object.entries(value)) yield* strings(v, at ? `${at}.${k}` : k);
}

/**
 * Bidirectional controls in a stored release (its record as the catalog
 * lists it, notes and yank reason included): publish refuses them in every
 * input, so one here came from an older relcast or a hand edit, and can make
 * the appcast, the pages or the update window show another version or text
 * than the record holds. One problem per field.
 */
export function recordBidiProblems(entry: ReleaseRecord): string[] {
  const found: string[] = [];
  for (const [field, text] of strings(entry, "")) {
    // Markdown fields are published rendered, with their character references decoded (`&#x202E;`).
    const problem = bidiControlProblem(text) ?? (/markdown/i.test(field) ? bidiControlInRendered(renderNotesHtml(text)) : undefined);
    if (problem) found.push(`field ${field}: ${problem}; remove it from the record and the catalog (republish under a new version if the record cannot be edited), then run \`relcast rebuild\``);
  }
  return found;
}
