import type { ReleaseRecord } from "../record-schema.js";
import { renderNotesHtml, type RenderOptions } from "./markdown.js";
import { escapeHtml } from "../../core/html-escape.js";


/**
 * The HTML of a record's notes: its Markdown rendered (records since
 * Markdown notes), else its plain list (older records).
 */
export function recordNotesHtml(record: Pick<ReleaseRecord, "releaseNotesList" | "releaseNotesMarkdown">, options: RenderOptions = {}): string {
  if (record.releaseNotesMarkdown !== undefined) return renderNotesHtml(record.releaseNotesMarkdown, options);
  if (record.releaseNotesList.length === 0) return "";
  return `<ul>${record.releaseNotesList.map((n) => `<li>${escapeHtml(n)}</li>`).join("")}</ul>`;
}
