import { Command, CommanderError } from "commander";
import { maskSecrets, registerKeyShapedArguments, registerSecret } from "../core/secrets.js";
import { packageVersion } from "../core/package-version.js";
import { applyConventions } from "./command-tree.js";
import { maskSecretsInRunnerLog } from "./github-actions.js";
import { reportError } from "./report-error.js";

export type Register = (program: Command) => void;

/** The `relcast` command tree holding the given commands. */
export function createProgram(registers: readonly Register[]): Command {
  const program = new Command("relcast")
    .description("Publish self-updating macOS plugin releases: zip, sign, upload, catalog, appcast.")
    .version(packageVersion(), "-V, --version", "print relcast's version")
    .option("--debug", "print stack traces and debug logs")
    // Root options only before the command name: `publish --version 1.2.0` is publish's flag.
    .enablePositionalOptions()
    .showHelpAfterError("(run with --help for usage)")
    // commander's own messages echo flag values: they pass the secret mask too.
    .configureOutput({ writeErr: (text) => process.stderr.write(maskSecrets(text)), writeOut: (text) => process.stdout.write(maskSecrets(text)) })
    .exitOverride();
  for (const register of registers) register(program);
  applyConventions(program);
  return program;
}

/** Runs one command line (`argv` as process.argv: node, script, args…) and maps errors to exit codes. */
export async function runProgram(program: Command, argv: string[]): Promise<number> {
  maskSecretsInRunnerLog();
  // The key in the environment is a secret whether or not this command reads it.
  registerSecret(process.env.RELCAST_SIGNING_KEY);
  // A key pasted into a flag (e.g. --key-file <the key>) is masked before anything can print it.
  registerKeyShapedArguments(argv);
  try {
    await program.parseAsync(argv);
    return typeof process.exitCode === "number" ? process.exitCode : 0;
  } catch (err) {
    if (err instanceof CommanderError) {
      // commander already printed its message (or help/version).
      return err.exitCode === 0 ? 0 : 2;
    }
    return reportError(err, { debug: argv.includes("--debug") });
  }
}
