/**
 * The one rule for a name in a bundle (a file, folder or link name, one path
 * component): what the zip readers refuse as an entry name part, preflight
 * refuses on disk, and the zip step and `verify` refuse in a zip. A
 * backslash is a folder separator to Windows-made unzippers and to yauzl's
 * lenient mode, so "x\y" unpacks as x/y somewhere and as one file elsewhere;
 * relcast's readers refuse such a zip, so a release holding one could never
 * be a delta base. "", "." and ".." (and NUL) cannot be a file's own name.
 * UTF-8 is the other half of the rule (core/utf8-bytes.ts).
 */
import { RelcastError } from "./errors.js";

/** Why `part` (one component, decoded) cannot be a name in a bundle; undefined when it can. The sentence follows the name. */
export function namePartProblem(part: string): string | undefined {
  if (part === "" || part === "." || part === "..") return `is ${JSON.stringify(part)}, not a name`;
  if (part.includes("\\")) return 'holds a backslash ("\\"), a folder separator to some unzippers (relcast\'s zip readers refuse it)';
  if (part.includes("\0")) return "holds a NUL";
  return undefined;
}

/** The first problem of a slash-separated path's components; undefined when every one is a name. */
export function namePathProblem(parts: readonly string[]): string | undefined {
  for (const part of parts) {
    const why = namePartProblem(part);
    if (why) return `${JSON.stringify(part)} ${why}`;
  }
  return undefined;
}

/** A bundle entry (`shown`: its path from the bundle folder) whose name breaks the rule. */
export function badNameError(shown: string, why: string): RelcastError {
  return new RelcastError("E_INPUT", `the bundle has a name that cannot be in an update zip: ${shown} ${why}`, 'rename it (without "\\"), then build and publish again');
}
