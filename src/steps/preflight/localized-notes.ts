import { RelcastError } from "../../core/errors.js";
import { canonicalNotesLanguage, DEFAULT_NOTES_LANGUAGE } from "../../domain/notes/notes-language.js";
import type { ReleaseNotes } from "../../domain/release-notes.js";
import { readReleaseNotes } from "./notes-file.js";

/** One `--localized-notes <lang>=<file>`, its language in canonical form. */
export interface LocalizedNotesArg {
  lang: string;
  file: string;
}

export interface LocalizedNotes {
  lang: string;
  notes: ReleaseNotes;
}

const HINT = "pass --localized-notes <lang>=<file>, e.g. --localized-notes de=notes.de.md --localized-notes pt-BR=notes.pt-BR.md";

/**
 * Parses every `--localized-notes` argument before any file is read: a
 * language tag Sparkle can match (`de`, `pt-BR`, `zh-Hant`), each language
 * once, never the default language (the `--notes` file is the English one:
 * Sparkle reads an element without xml:lang among several as "en").
 */
export function parseLocalizedNotesArgs(args: readonly string[]): LocalizedNotesArg[] {
  const seen = new Map<string, string>();
  const out: LocalizedNotesArg[] = [];
  for (const arg of args) {
    const at = arg.indexOf("=");
    if (at <= 0 || at === arg.length - 1) throw new RelcastError("E_USAGE", `--localized-notes "${arg}" is not <lang>=<file>`, HINT);
    const tag = arg.slice(0, at);
    const lang = canonicalNotesLanguage(tag);
    if (lang === undefined) {
      throw new RelcastError("E_USAGE", `--localized-notes: "${tag}" is not a language tag Sparkle can match`, "use a language, optionally with a script or region, as macOS names localizations: de, fr-CA, pt-BR, zh-Hant, es-419");
    }
    if (lang === DEFAULT_NOTES_LANGUAGE) {
      throw new RelcastError("E_USAGE", `--localized-notes ${tag}: the --notes file is already the ${DEFAULT_NOTES_LANGUAGE} notes`, `Sparkle reads the default notes as "${DEFAULT_NOTES_LANGUAGE}"; put the English notes in --notes and pass only other languages to --localized-notes`);
    }
    const before = seen.get(lang);
    if (before !== undefined) throw new RelcastError("E_USAGE", `--localized-notes names ${lang} twice (${before} and ${arg})`, "pass each language once");
    seen.set(lang, arg);
    out.push({ lang, file: arg.slice(at + 1) });
  }
  return out.sort((a, b) => (a.lang < b.lang ? -1 : a.lang > b.lang ? 1 : 0));
}

/** Each language's file, with the same checks as `--notes` (UTF-8, XML-safe characters, size, not empty). */
export async function readLocalizedNotes(args: readonly LocalizedNotesArg[]): Promise<LocalizedNotes[]> {
  const out: LocalizedNotes[] = [];
  for (const { lang, file } of args) out.push({ lang, notes: await readReleaseNotes(file, `--localized-notes ${lang}=`) });
  return out;
}
