/**
 * Languages of localized release notes. Sparkle picks the element whose
 * `xml:lang` best matches the user's languages with
 * `NSBundle preferredLocalizationsFromArray:` (SUAppcast.m), which knows
 * Apple's localization identifiers: a language, an optional script and an
 * optional region (`de`, `pt-BR`, `zh-Hant`, `es-419`). Extensions and
 * private-use tags mean nothing there, so they are refused.
 */
const SIMPLE_TAG = /^[a-z]{2,3}(-[A-Z][a-z]{3})?(-([A-Z]{2}|\d{3}))?$/;

/** An element without `xml:lang` among several is read by Sparkle as English: the `--notes` file is that one. */
export const DEFAULT_NOTES_LANGUAGE = "en";

/** The canonical form of a language tag (`pt-br` → `pt-BR`), or undefined when it is not one Sparkle can match. */
export function canonicalNotesLanguage(tag: string): string | undefined {
  let canonical: string | undefined;
  try {
    canonical = Intl.getCanonicalLocales(tag)[0];
  } catch {
    return undefined;
  }
  return canonical !== undefined && SIMPLE_TAG.test(canonical) ? canonical : undefined;
}

/** True for a tag already in canonical form (what records hold). */
export function isNotesLanguage(tag: string): boolean {
  return canonicalNotesLanguage(tag) === tag;
}
