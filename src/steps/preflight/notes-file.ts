import { readFile } from "node:fs/promises";
import { RelcastError } from "../../core/errors.js";
import { bidiControlInFile, bidiControlInRendered, encodedBidiInFile } from "../../core/bidi-controls.js";
import { codePointName, firstIllegalXmlChar, firstInvalidUtf8 } from "../../core/xml-text.js";
import { changelogSection, versionHeadings } from "../../domain/notes/keep-a-changelog.js";
import { renderNotesHtml } from "../../domain/notes/markdown.js";
import { MAX_NOTES_BYTES, parseReleaseNotes, type ReleaseNotes } from "../../domain/release-notes.js";

async function readText(file: string, what: string, hint: string): Promise<string> {
  let bytes: Buffer;
  try {
    bytes = await readFile(file);
  } catch (err) {
    throw new RelcastError("E_INPUT", `cannot read ${what} ${file} (${(err as NodeJS.ErrnoException).code})`, hint);
  }
  if (bytes.length > MAX_NOTES_BYTES && what === "notes file") {
    throw new RelcastError("E_INPUT", `notes file ${file} is ${bytes.length} bytes; the limit is ${MAX_NOTES_BYTES}`, "keep release notes short and link the full notes with a URL");
  }
  const badByte = firstInvalidUtf8(bytes);
  if (badByte) {
    throw new RelcastError(
      "E_INPUT",
      `${what} ${file} is not valid UTF-8: line ${badByte.line}, column ${badByte.column} (byte offset ${badByte.offset}) starts with byte 0x${badByte.byte.toString(16).toUpperCase().padStart(2, "0")}`,
      `save the ${what} as UTF-8 text (e.g. iconv -f latin1 -t utf-8)`,
    );
  }
  const text = bytes.toString("utf8");
  const bad = firstIllegalXmlChar(text);
  if (bad) {
    throw new RelcastError(
      "E_INPUT",
      `${what} ${file}: line ${bad.line}, column ${bad.column}: character ${codePointName(bad.codePoint)} is not allowed in XML 1.0 (the appcast would stop parsing for every installed copy)`,
      `remove the control character (terminal colour codes, NUL, vertical tab, form feed) from the ${what} and publish again`,
    );
  }
  const bidi = bidiControlInFile(text);
  if (bidi) {
    throw new RelcastError(
      "E_INPUT",
      `${what} ${file}: ${bidi.problem} (the update window or a page could show another version or text than the file says)`,
      `remove the character from the ${what} (grep -nP '[\\x{200E}\\x{200F}\\x{061C}\\x{202A}-\\x{202E}\\x{2066}-\\x{2069}]' ${file} finds every one) and publish again; right-to-left text shows in its own direction without it`,
    );
  }
  renderedBidiCheck(text, `${what} ${file}`, what);
  return text;
}

const REMOVE_SPELLED = "remove it (a character reference &#x200E; &#x200F; &#x61C; &#x202A;-&#x202E; &#x2066;-&#x2069; or &lrm; &rlm;, in decimal or hex, or the percent-encoded %E2%80%8E… in a URL)";

/**
 * Markdown turns character references (`&#x202E;`, `&rlm;`) and the
 * percent-encoding in an autolink's text into the characters themselves:
 * what a file spells in ASCII reaches the record, the appcast and the pages
 * decoded. So the whole file is checked rendered as well as raw, one rule for
 * every section of a changelog (the raw check covers them all too), and the
 * refusal names the line and column of the spelling.
 */
function renderedBidiCheck(markdown: string, source: string, what: string, locate = true): void {
  const rendered = bidiControlInRendered(renderNotesHtml(markdown));
  if (!rendered) return;
  const at = locate ? encodedBidiInFile(markdown, (line) => bidiControlInRendered(renderNotesHtml(line)) !== undefined) : undefined;
  const where = at ? `line ${at.line}, column ${at.column}: "${at.spelled}" renders as a bidirectional control` : "a character reference or percent-encoding renders as a bidirectional control";
  throw new RelcastError(
    "E_INPUT",
    `${source}: ${where}: ${rendered} (the update window or a page could show another version or text than the file says)`,
    `${REMOVE_SPELLED} from the ${what} and publish again`,
  );
}

function checked(notes: ReleaseNotes, source: string): ReleaseNotes {
  // The file was checked rendered as a whole; the notes taken from it are too (a section can render otherwise on its
  // own), without a position: theirs is not the file's.
  renderedBidiCheck(notes.markdown, source, "notes", false);
  if (notes.firstText === "") {
    throw new RelcastError("E_INPUT", `${source} holds no text`, "write at least one line describing the release (Markdown: a list of changes)");
  }
  if (Buffer.byteLength(notes.markdown) > MAX_NOTES_BYTES) {
    throw new RelcastError("E_INPUT", `${source} is ${Buffer.byteLength(notes.markdown)} bytes; the limit is ${MAX_NOTES_BYTES}`, "keep release notes short and link the full notes with a URL");
  }
  return notes;
}

/** `--notes <file>` (or `--localized-notes <lang>=<file>`): the whole file is the notes, in Markdown. */
export async function readReleaseNotes(file: string, flag = "--notes"): Promise<ReleaseNotes> {
  const text = await readText(file, "notes file", `pass ${flag} a Markdown file (for example a list of changes)`);
  // A whole changelog would become one release's notes, every older release's changes included.
  const versions = versionHeadings(text);
  if (versions.length >= 2) {
    throw new RelcastError(
      "E_INPUT",
      `notes file ${file} is a whole changelog: it has ${versions.length} version headings (${versions.slice(0, 3).map((v) => `"${v}"`).join(", ")}${versions.length > 3 ? ", …" : ""}), and all of it would become this release's notes`,
      `pass it as --changelog ${file} to take only this version's section (in the Action: changelog: instead of notes:)`,
    );
  }
  return checked(parseReleaseNotes(text), `notes file ${file}`);
}

/** `--changelog <file>`: the section of `version` in a Keep a Changelog file. */
export async function readChangelogNotes(file: string, version: string): Promise<ReleaseNotes> {
  const text = await readText(file, "changelog", "pass --changelog a Keep a Changelog file such as CHANGELOG.md");
  const section = changelogSection(text, version, file);
  return checked(parseReleaseNotes(section.markdown), `the ${section.heading} section of ${file}`);
}

/** Where a release's notes come from: exactly one of the two flags. */
export interface NotesSource {
  notesFile?: string | undefined;
  changelogFile?: string | undefined;
}

/** Usage check, before anything else runs: one source, not none, not both. */
export function checkNotesSource(source: NotesSource): void {
  if (source.notesFile !== undefined && source.changelogFile !== undefined) {
    throw new RelcastError("E_USAGE", "--notes and --changelog were both given", "pass one: --notes <file> (the notes themselves) or --changelog CHANGELOG.md (this version's section)");
  }
  if (source.notesFile === undefined && source.changelogFile === undefined) {
    throw new RelcastError("E_USAGE", "no release notes given", "pass --notes <file> (Markdown) or --changelog CHANGELOG.md");
  }
}

export async function loadReleaseNotes(source: NotesSource, version: string): Promise<ReleaseNotes> {
  checkNotesSource(source);
  return source.changelogFile !== undefined ? readChangelogNotes(source.changelogFile, version) : readReleaseNotes(source.notesFile!);
}
