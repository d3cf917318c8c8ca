import { appendFile, readFile } from "node:fs/promises";
import path from "node:path";
import { RelcastError } from "../../core/errors.js";

/** A file name as one literal .gitignore pattern anchored to its folder: `*?[\` and a trailing space lose their meaning. */
function literalPattern(name: string): string {
  return "/" + name.replace(/[\\*?[]/g, "\\$&").replace(/ $/, "\\ ");
}

/**
 * Makes `git add -A` leave the signing key out: a pattern for exactly that
 * file in the .gitignore of its own folder (git reads a .gitignore in every
 * folder), added once, whether or not the folder is a git repository yet.
 * Returns the .gitignore written to, or undefined when it already had the
 * line.
 */
export async function ignoreInGit(keyFile: string): Promise<string | undefined> {
  const file = path.join(path.dirname(path.resolve(keyFile)), ".gitignore");
  const pattern = literalPattern(path.basename(keyFile));
  const text = await readFile(file, "utf8").catch((err: NodeJS.ErrnoException) => {
    if (err.code === "ENOENT") return "";
    throw new RelcastError("E_INPUT", `cannot read ${file} (${err.code})`, "check its permissions; relcast init adds the signing key's name to it");
  });
  if (text.split(/\r?\n/).some((line) => line === pattern)) return undefined;
  const lead = text === "" || text.endsWith("\n") ? "" : "\n";
  await appendFile(file, `${lead}# relcast signing key (relcast init): never commit it\n${pattern}\n`).catch((err: NodeJS.ErrnoException) => {
    throw new RelcastError("E_INPUT", `cannot add the signing key to ${file} (${err.code})`, "add the line " + pattern + " to it yourself, or pass --key-file a path outside the repository");
  });
  return file;
}
