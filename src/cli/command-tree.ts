import type { Command } from "commander";

function allCommands(root: Command): Command[] {
  return [root, ...root.commands.flatMap((c) => allCommands(c))];
}

/**
 * Conventions every command shares, applied once to the whole tree:
 *
 * - `--debug` is accepted after the command name too (`relcast publish … --debug`).
 *   (The root parses its own options only before the command name, see
 *   `enablePositionalOptions` in main.ts, so its `--version` never swallows
 *   `publish --version 1.2.0`.)
 * - An unknown flag is reported before a missing required one: commander checks
 *   required options first, so `publish --verison 1.2.0` would complain about
 *   `--version` instead of naming the typo. Required options are checked here,
 *   in a preAction hook, which runs after commander's unknown-option check.
 */
export function applyConventions(program: Command): void {
  for (const command of allCommands(program)) {
    if (command === program) continue;
    if (!command.options.some((o) => o.long === "--debug")) command.option("--debug", "print stack traces and debug logs");
    for (const option of command.options) {
      if (!option.mandatory) continue;
      option.mandatory = false;
      command.hook("preAction", (self) => {
        if (self.getOptionValue(option.attributeName()) === undefined) {
          self.error(`error: required option '${option.flags}' not specified`, { code: "commander.missingMandatoryOptionValue", exitCode: 2 });
        }
      });
    }
  }
}
