import { readFile } from "node:fs/promises";
import { RelcastError } from "../core/errors.js";
import { codePointName, firstIllegalXmlChar, firstInvalidUtf8 } from "./xml-text.js";

export const MAX_NOTES_BYTES = 256 * 1024;

export interface ReleaseNotes {
  list: string[];
  /** The §2.6 `releaseNotes`: `- <bullet>` lines joined by "\n". */
  text: string;
}

/** Each non-empty line is one bullet; a leading "- " or "* " is dropped. */
export function parseReleaseNotes(content: string): ReleaseNotes {
  const list = content
    .replace(/^\uFEFF/, "")
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line.length > 0)
    .map((line) => line.replace(/^[-*](\s+|$)/, "").trim())
    .filter((line) => line.length > 0);
  return { list, text: list.map((b) => `- ${b}`).join("\n") };
}

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
  const badByte = firstInvalidUtf8(bytes);
  if (badByte) {
    throw new RelcastError(
      "E_INPUT",
      `notes file ${file} is not valid UTF-8: line ${badByte.line}, column ${badByte.column} (byte offset ${badByte.offset}) starts with byte 0x${badByte.byte.toString(16).toUpperCase().padStart(2, "0")}`,
      "save the notes as UTF-8 text (e.g. iconv -f latin1 -t utf-8)",
    );
  }
  const text = bytes.toString("utf8");
  const bad = firstIllegalXmlChar(text);
  if (bad) {
    throw new RelcastError(
      "E_INPUT",
      `notes file ${file}: line ${bad.line}, column ${bad.column}: character ${codePointName(bad.codePoint)} is not allowed in XML 1.0 (the appcast would stop parsing for every installed copy)`,
      "remove the control character (terminal colour codes, NUL, vertical tab, form feed) from the notes and publish again",
    );
  }
  const notes = parseReleaseNotes(text);
  if (notes.list.length === 0) {
    throw new RelcastError("E_INPUT", `notes file ${file} has no non-empty lines`, "write at least one line describing the release");
  }
  return notes;
}
