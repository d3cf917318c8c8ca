import markdownIt, { type MarkdownIt } from "markdown-it";

/**
 * The one Markdown dialect of release notes: CommonMark (markdown-it's
 * `commonmark` preset), raw HTML escaped rather than passed through, and
 * links and images only to http(s) (and mailto); anything else
 * (javascript:, data:, file:, relative paths that mean nothing inside an
 * appcast) stays visible as text.
 */
export function isAllowedNotesLink(url: string): boolean {
  return /^(https?:\/\/|mailto:)/i.test(url.trim());
}

let parser: MarkdownIt | undefined;

export function notesMarkdown(): MarkdownIt {
  if (!parser) {
    parser = markdownIt("commonmark", { html: false, linkify: false, typographer: false });
    parser.validateLink = isAllowedNotesLink;
  }
  return parser;
}

export interface RenderOptions {
  /**
   * The level the notes' highest heading gets, so notes fit the page they are
   * placed in (under a page's `<h3>Version 1.2.0</h3>`, "### Fixed" must not
   * become an `<h2>`). Default: headings as written.
   */
  topHeadingLevel?: number;
}

/** Rendered HTML of release notes, for the appcast description and the pages. */
export function renderNotesHtml(markdown: string, options: RenderOptions = {}): string {
  const md = notesMarkdown();
  const tokens = md.parse(markdown, {});
  if (options.topHeadingLevel !== undefined) {
    const headings = tokens.filter((t) => t.type === "heading_open" || t.type === "heading_close");
    const highest = Math.min(...headings.map((t) => Number(t.tag.slice(1))));
    const shift = options.topHeadingLevel - highest;
    for (const t of headings) t.tag = `h${Math.min(6, Number(t.tag.slice(1)) + shift)}`;
  }
  return md.renderer.render(tokens, md.options, {});
}
