/**
 * Languages of localized release notes. Sparkle picks the element whose
 * `xml:lang` best matches the user's languages with
 * `NSBundle preferredLocalizationsFromArray:` (SUAppcast.m), which knows
 * Apple's localization identifiers: a language, an optional script and an
 * optional region (`de`, `pt-BR`, `zh-Hant`, `es-419`). Extensions and
 * private-use tags mean nothing there, so they are refused.
 */
const SIMPLE_TAG = /^[a-z]{2,3}(-[A-Z][a-z]{3})?(-([A-Z]{2}|\d{3}))?$/;

/**
 * ISO 639 codes that name no language a Mac can be set to: undetermined,
 * no linguistic content, uncoded, multiple, and the private-use range
 * qaa–qtz. No user's preferred languages match them, so notes under them
 * would never be shown.
 */
const SPECIAL_PURPOSE = /^(und|zxx|mis|mul|q[a-t][a-z])$/;

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
  if (canonical === undefined || !SIMPLE_TAG.test(canonical)) return undefined;
  return SPECIAL_PURPOSE.test(canonical.split("-")[0]!) ? undefined : canonical;
}

/** True for a tag already in canonical form (what records hold). */
export function isNotesLanguage(tag: string): boolean {
  return canonicalNotesLanguage(tag) === tag;
}
