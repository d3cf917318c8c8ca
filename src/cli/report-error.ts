import { EXIT_CODES, isRelcastError } from "../core/errors.js";
import { printable } from "../core/printable.js";
import { maskSecrets } from "../core/secrets.js";
import { issueTrackerUrl } from "../core/package-version.js";
import { annotateError } from "./github-actions.js";

/**
 * The one place where errors become text and exit codes: one line naming
 * the problem, one line with the fix, no stack unless --debug.
 */
export function reportError(err: unknown, options: { debug: boolean }): number {
  // Messages quote names read from stores and files: no raw control character, no line that reads as a workflow command.
  const write = (line: string) => process.stderr.write(printable(maskSecrets(line), { keepNewlines: true }) + "\n");
  if (isRelcastError(err)) {
    write(`relcast: error [${err.code}]: ${err.message}`);
    // Every error says what to do; one without its own fix is relcast's bug, and says where to report it.
    const hint = err.hint ?? `this is a relcast bug: re-run with --debug and report the output at ${issueTrackerUrl()}`;
    write(`  fix: ${hint}`);
    annotateError(`${err.message} (fix: ${hint})`, { title: `relcast ${err.code}` });
    if (options.debug && err.stack) write(err.stack);
    return err.exitCode;
  }
  const full = diskFull(err);
  if (full) {
    write(`relcast: error [E_INPUT]: ${full}`);
    write("  fix: free space there (or point TMPDIR at a disk with room for the zip and its deltas) and run the command again; a publish re-run completes what this one began");
    annotateError(full, { title: "relcast E_INPUT" });
    return EXIT_CODES.E_INPUT;
  }
  const message = err instanceof Error ? err.message : String(err);
  write(`relcast: internal error: ${message}`);
  write(`  fix: re-run with --debug and report the output at ${issueTrackerUrl()}`);
  annotateError(message, { title: "relcast internal error" });
  if (options.debug && err instanceof Error && err.stack) write(err.stack);
  return EXIT_CODES.E_INTERNAL;
}

/** A full disk or quota (not relcast's bug): the sentence naming the file being written, or undefined. */
function diskFull(err: unknown): string | undefined {
  const e = err as NodeJS.ErrnoException | undefined;
  if (!e || (e.code !== "ENOSPC" && e.code !== "EDQUOT")) return undefined;
  // copyFile's error names its source in `path` and the file it was writing in `dest`.
  const file = (e as { dest?: string }).dest ?? e.path;
  const where = file ? ` while writing ${file}` : "";
  return e.code === "ENOSPC" ? `no space left on the device${where}` : `the disk quota is used up${where}`;
}
