import { readFile } from "node:fs/promises";
import { RelcastError } from "../../core/errors.js";
import { changelogSection } from "../../domain/notes/keep-a-changelog.js";
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
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    throw new RelcastError("E_INPUT", `${what} ${file} is not valid UTF-8`, `save the ${what} as UTF-8 text`);
  }
}

function checked(notes: ReleaseNotes, source: string): ReleaseNotes {
  if (notes.firstText === "") {
    throw new RelcastError("E_INPUT", `${source} holds no text`, "write at least one line describing the release (Markdown: a list of changes)");
  }
  if (Buffer.byteLength(notes.markdown) > MAX_NOTES_BYTES) {
    throw new RelcastError("E_INPUT", `${source} is ${Buffer.byteLength(notes.markdown)} bytes; the limit is ${MAX_NOTES_BYTES}`, "keep release notes short and link the full notes with a URL");
  }
  return notes;
}

/** `--notes <file>`: the whole file is the notes, in Markdown. */
export async function readReleaseNotes(file: string): Promise<ReleaseNotes> {
  const text = await readText(file, "notes file", "pass --notes a Markdown file (for example a list of changes)");
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
