import { appendFile, mkdir, readFile, stat } from "node:fs/promises";
import path from "node:path";
import { RelcastError } from "../../core/errors.js";

/** A file name as one literal .gitignore pattern anchored to its folder: `*?[\` and a trailing space lose their meaning. */
function literalPattern(name: string): string {
  return "/" + name.replace(/[\\*?[]/g, "\\$&").replace(/ $/, "\\ ");
}

/**
 * Refuses a --key-file that cannot name one plain file: control characters
 * (a newline would split the .gitignore line in two) or a trailing slash.
 */
export function checkKeyFileName(keyFile: string): void {
  if (/[\u0000-\u001f\u007f]/.test(keyFile)) {
    throw new RelcastError("E_USAGE", `--key-file ${JSON.stringify(keyFile)} contains a control character (newline, tab, ...)`, "name the key file with printable characters only");
  }
  if (keyFile === "" || /[\\/]$/.test(keyFile) || [".", ".."].includes(path.basename(keyFile))) {
    throw new RelcastError("E_USAGE", `--key-file ${JSON.stringify(keyFile)} names a folder, not a file`, "name a file, e.g. --key-file keys/relcast-signing-key.txt");
  }
}

/** The git repository around `from` (the nearest folder with a .git), else `from` itself: a project not yet under git. */
async function projectRoot(from: string): Promise<string> {
  for (let dir = path.resolve(from); ; dir = path.dirname(dir)) {
    if (await stat(path.join(dir, ".git")).then(() => true, () => false)) return dir;
    if (path.dirname(dir) === dir) return path.resolve(from);
  }
}

/**
 * Makes `git add -A` leave the signing key out: a pattern for exactly that
 * file in the .gitignore of its own folder (git reads a .gitignore in every
 * folder), added once, whether or not the folder is a git repository yet.
 * Returns the .gitignore written to, undefined when it already had the
 * line, or "outside" when the key lies outside the project's repository (the
 * one around the current folder), where nothing is written. The key's folder
 * is created when missing.
 */
export async function ignoreInGit(keyFile: string): Promise<string | undefined | "outside"> {
  const folder = path.dirname(path.resolve(keyFile));
  const root = await projectRoot(process.cwd());
  const rel = path.relative(root, folder);
  // A key outside the project is not committed with it: a .gitignore there would edit someone else's folder.
  if (rel.startsWith("..") || path.isAbsolute(rel)) return "outside";
  await mkdir(folder, { recursive: true }).catch((err: NodeJS.ErrnoException) => {
    throw new RelcastError("E_INPUT", `cannot create the key file's folder ${folder} (${err.code})`, "create it yourself, or pass --key-file a path in an existing folder");
  });
  const file = path.join(folder, ".gitignore");
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
