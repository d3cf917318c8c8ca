import { outlineNotes } from "./notes/notes-list.js";

export const MAX_NOTES_BYTES = 256 * 1024;

/**
 * Release notes as written (Markdown) and the record's plain forms of them.
 * The record keeps `list`/`text` (the §2.6 form: list items only, as plain
 * strings and as "- " lines) and the Markdown itself, which the appcast and
 * the pages render (see notes/markdown.ts).
 */
export interface ReleaseNotes {
  list: string[];
  /** The record's `releaseNotes`: `- <item>` lines joined by "\n". */
  text: string;
  /** The notes as written: CommonMark. */
  markdown: string;
  /** The default summary: the first list item, else the first paragraph, else the first heading. */
  firstText: string;
}

export function parseReleaseNotes(content: string): ReleaseNotes {
  const markdown = content.replace(/^\uFEFF/, "").replace(/\r\n?/g, "\n").trim() + "\n";
  const { items, firstText } = outlineNotes(markdown);
  return { list: items, text: items.map((b) => `- ${b}`).join("\n"), markdown, firstText: firstText ?? "" };
}
