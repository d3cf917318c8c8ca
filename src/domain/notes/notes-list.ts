import type { Token } from "markdown-it";
import { notesMarkdown } from "./markdown.js";

/** The visible text of an inline token: emphasis and links lose their markup, images keep their alt text. */
function plainText(inline: Token): string {
  let text = "";
  for (const child of inline.children ?? []) {
    if (child.type === "text" || child.type === "code_inline" || child.type === "html_inline") text += child.content;
    else if (child.type === "softbreak" || child.type === "hardbreak") text += " ";
    else if (child.type === "image") text += child.children?.map((c) => c.content).join("") ?? "";
  }
  return text.replace(/\s+/g, " ").trim();
}

export interface NotesOutline {
  /** Text of every list item in document order; nested items are entries of their own. */
  items: string[];
  /** The default summary: the first list item, else the first paragraph, else the first heading. */
  firstText: string | undefined;
}

/**
 * Reads the structure of Markdown notes. Only list items become entries of
 * `releaseNotesList`: a heading ("### Fixed") or a paragraph is context for
 * a reader of the rendered notes, not a change of its own.
 */
export function outlineNotes(markdown: string): NotesOutline {
  const tokens = notesMarkdown().parse(markdown, {});
  const items: string[] = [];
  let firstParagraph: string | undefined;
  let firstHeading: string | undefined;
  // An item's own text is its first paragraph; later paragraphs of the same item join it.
  const open: Array<{ index: number | undefined }> = [];
  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i]!;
    if (token.type === "list_item_open") open.push({ index: undefined });
    else if (token.type === "list_item_close") open.pop();
    else if (token.type === "inline") {
      const text = plainText(token);
      if (text === "") continue;
      const item = open.at(-1);
      if (!item) {
        if (tokens[i - 1]?.type === "heading_open") firstHeading ??= text;
        else firstParagraph ??= text;
      } else if (item.index === undefined) item.index = items.push(text) - 1;
      else items[item.index] = `${items[item.index]} ${text}`;
    }
  }
  return { items, firstText: items[0] ?? firstParagraph ?? firstHeading };
}
