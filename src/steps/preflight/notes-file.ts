import { readFile } from "node:fs/promises";
import { RelcastError } from "../../core/errors.js";
import { MAX_NOTES_BYTES, parseReleaseNotes, type ReleaseNotes } from "../../domain/release-notes.js";

/** Reads `--notes`: at most {@link MAX_NOTES_BYTES}, strict UTF-8, at least one bullet. */
export async function readReleaseNotes(file: string): Promise<ReleaseNotes> {
  let bytes: Buffer;
  try {
    bytes = await readFile(file);
  } catch (err) {
    throw new RelcastError("E_INPUT", `cannot read notes file ${file} (${(err as NodeJS.ErrnoException).code})`, "pass --notes a text file with one bullet per line");
  }
  if (bytes.length > MAX_NOTES_BYTES) {
    throw new RelcastError("E_INPUT", `notes file ${file} is ${bytes.length} bytes; the limit is ${MAX_NOTES_BYTES}`, "keep release notes short and link the full notes with a URL");
  }
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    throw new RelcastError("E_INPUT", `notes file ${file} is not valid UTF-8`, "save the notes as UTF-8 text");
  }
  const notes = parseReleaseNotes(text);
  if (notes.list.length === 0) {
    throw new RelcastError("E_INPUT", `notes file ${file} has no non-empty lines`, "write at least one line describing the release");
  }
  return notes;
}
