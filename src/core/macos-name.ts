import { RelcastError } from "./errors.js";

/**
 * The form under which APFS and HFS+ as macOS formats them by default
 * (case-insensitive) compare names: Unicode canonical decomposition (NFC
 * and NFD spellings are one name) and case folded. "/" keeps its place, so
 * a whole path has a key too.
 */
export function macOSNameKey(name: string): string {
  // ASCII (nearly every name) is its own NFD form and stays ASCII when lower-cased: no trip through ICU.
  if (/^[\x00-\x7f]*$/.test(name)) return name.toLowerCase();
  return name.normalize("NFD").toLowerCase().normalize("NFD");
}

/**
 * Names (or paths) seen so far, by their macOS key: the one rule for
 * preflight's check of the bundle, the zip step's listing of it and the zip
 * rules verify applies, so a bundle changed after preflight cannot bring
 * two spellings of one name into a zip that unpacks to one file on a Mac.
 */
export class MacOSNames {
  private readonly seen = new Map<string, string>();

  /** The name seen earlier that is `name` on macOS but spelled otherwise (or spelled the same: a duplicate), else undefined; remembers `name`. */
  twinOf(name: string): string | undefined {
    const key = macOSNameKey(name);
    const earlier = this.seen.get(key);
    if (earlier !== undefined) return earlier;
    this.seen.set(key, name);
    return undefined;
  }
}

/** Two names in one folder of the bundle that macOS's default file system holds as one. */
export function sameMacOSNameError(folder: string, earlier: string, name: string): RelcastError {
  return new RelcastError(
    "E_INPUT",
    `${folder} holds "${earlier}" and "${name}", one name on macOS's default file system (it ignores case and Unicode normalization): unpacking the update would keep only one of them`,
    "rename or remove one of the two in the bundle, then build and publish again",
  );
}
