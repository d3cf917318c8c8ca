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
