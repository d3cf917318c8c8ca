import semver from "semver";
import { RelcastError } from "../../core/errors.js";
import { notesMarkdown } from "./markdown.js";

/**
 * A version heading of a Keep a Changelog file (https://keepachangelog.com):
 * `## [1.2.0] - 2026-11-20`, also without brackets, with a leading `v`, with
 * the date in parentheses (`## v1.3.0 (2026-11-27)`, as many generators
 * write it) or left out. `## [Unreleased]` is a heading of no version.
 */
const VERSION_HEADING = /^\[?v?(\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?)\]?(?:\s*(?:-|–|—)\s*.*|\s+\(.*\))?$/;
/** Keep a Changelog's heading for changes not yet released: a sign of a whole changelog, never of one release's notes. */
const UNRELEASED_HEADING = /^\[?unreleased\]?$/i;

export interface ChangelogSection {
  /** The Markdown under the version's heading, up to the next `##` heading. */
  markdown: string;
  /** The heading as written, e.g. "[1.2.0] - 2026-11-20". */
  heading: string;
}

interface Heading { version: string | undefined; text: string; line: number }

/** The Markdown headings of the given levels (h2: Keep a Changelog's), with the version each names, if any. */
function headingsOf(lines: string[], levels: ReadonlySet<string>): Heading[] {
  const tokens = notesMarkdown().parse(lines.join("\n"), {});
  const headings: Heading[] = [];
  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i]!;
    if (token.type !== "heading_open" || !levels.has(token.tag) || !token.map) continue;
    const text = tokens[i + 1]?.content.trim() ?? "";
    const match = VERSION_HEADING.exec(text);
    headings.push({ version: match && semver.valid(match[1]!) ? match[1]! : undefined, text, line: token.map[0] });
  }
  return headings;
}

/**
 * The headings (levels 1 to 3) of a Markdown text that name a version or
 * `[Unreleased]`, in file order: two or more mean a whole changelog, not
 * one release's notes.
 */
export function versionHeadings(content: string): string[] {
  return headingsOf(content.replace(/^\uFEFF/, "").split(/\r?\n/), new Set(["h1", "h2", "h3"])).flatMap((h) => (h.version || UNRELEASED_HEADING.test(h.text) ? [h.text] : []));
}

/** Every version the file has a section for, in file order, and the section of `version`. */
export function changelogSection(content: string, version: string, file: string): ChangelogSection {
  const lines = content.replace(/^\uFEFF/, "").split(/\r?\n/);
  const headings = headingsOf(lines, new Set(["h2"]));
  const index = headings.findIndex((h) => h.version === version);
  if (index === -1) {
    const versions = headings.flatMap((h) => (h.version ? [h.version] : []));
    throw new RelcastError(
      "E_INPUT",
      versions.length > 0
        ? `${file} has no section for version ${version}; it has sections for ${versions.join(", ")}`
        : `${file} has no version sections (no "## [x.y.z] - date" headings)`,
      `add a "## [${version}] - YYYY-MM-DD" section (Keep a Changelog format), or pass the notes with --notes <file>`,
    );
  }
  const start = headings[index]!.line + 1;
  const end = headings[index + 1]?.line ?? trailingLinkDefinitions(lines);
  return { heading: headings[index]!.text, markdown: lines.slice(start, Math.max(start, end)).join("\n").trim() + "\n" };
}

/**
 * The line where the file's closing block of link reference definitions
 * (`[1.2.0]: https://…/compare/v1.1.0...v1.2.0`) begins, so the last
 * section does not carry them.
 */
function trailingLinkDefinitions(lines: readonly string[]): number {
  let end = lines.length;
  while (end > 0 && (lines[end - 1]!.trim() === "" || /^\s{0,3}\[[^\]]+\]:\s*\S/.test(lines[end - 1]!))) end--;
  return end;
}
