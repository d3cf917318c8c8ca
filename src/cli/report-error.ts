import { EXIT_CODES, isRelcastError } from "../core/errors.js";
import { maskSecrets } from "../core/secrets.js";
import { annotateError } from "./github-actions.js";

/**
 * The one place where errors become text and exit codes: one line naming
 * the problem, one line with the fix, no stack unless --debug.
 */
export function reportError(err: unknown, options: { debug: boolean }): number {
  const write = (line: string) => process.stderr.write(maskSecrets(line) + "\n");
  if (isRelcastError(err)) {
    write(`relcast: error [${err.code}]: ${err.message}`);
    if (err.hint) write(`  fix: ${err.hint}`);
    annotateError(`${err.message}${err.hint ? ` (fix: ${err.hint})` : ""}`, { title: `relcast ${err.code}` });
    if (options.debug && err.stack) write(err.stack);
    return err.exitCode;
  }
  const message = err instanceof Error ? err.message : String(err);
  write(`relcast: internal error: ${message}`);
  write("  fix: re-run with --debug and report the output at the project's issue tracker");
  annotateError(message, { title: "relcast internal error" });
  if (options.debug && err instanceof Error && err.stack) write(err.stack);
  return EXIT_CODES.E_INTERNAL;
}
