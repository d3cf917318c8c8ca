import { isDeepStrictEqual } from "node:util";
import { isValidTimeZone } from "../config/schema.js";
import type { ReleaseRecord } from "../domain/record-schema.js";
import { parseReleaseNotes } from "../domain/release-notes.js";
import { fromTimestamp } from "../domain/timestamps.js";

/**
 * What a record says twice must agree with itself: a field edited by hand
 * (after the publish wrote them all from one input) shows here even when the
 * catalog was rebuilt from the edited record. The notes' plain forms are
 * derived from the Markdown, the ISO time from `publishedAt`, `semver` is the
 * version. `publishedAtLocal` is not recomputed: its wording follows the ICU
 * data of the Node that published it. (`summary` may be any text given with
 * --summary, so only the catalog comparison holds it.)
 */
export function recordConsistencyProblems(record: ReleaseRecord): string[] {
  const problems: string[] = [];
  if (record.semver !== record.version) problems.push(`semver "${record.semver}" is not its version ${record.version}`);
  if (record.releaseNotesMarkdown !== undefined) {
    const notes = parseReleaseNotes(record.releaseNotesMarkdown);
    if (!isDeepStrictEqual(notes.list, record.releaseNotesList)) problems.push("releaseNotesList is not the list items of releaseNotesMarkdown (one of them was edited)");
    else if (notes.text !== record.releaseNotes) problems.push("releaseNotes is not the list items of releaseNotesMarkdown (one of them was edited)");
  }
  if (record.publishedAtIso !== undefined) {
    const iso = fromTimestamp(record.publishedAt).toISOString();
    if (iso !== record.publishedAtIso) problems.push(`publishedAtIso ${record.publishedAtIso} is not the time of publishedAt (${iso})`);
  }
  if (record.publishedAtTimezone !== undefined && !isValidTimeZone(record.publishedAtTimezone)) {
    problems.push(`publishedAtTimezone "${record.publishedAtTimezone}" is not an IANA time zone name`);
  }
  return problems;
}
