import { createLogger } from "../../core/logger.js";
import type { Command } from "commander";
import { RelcastError } from "../../core/errors.js";
import { normalizeVersion } from "../../domain/version-input.js";
import { unyankRelease, yankRelease, type YankResult } from "../../release/yank.js";
import { requireXmlText } from "../../core/xml-text.js";
import { withConfiguredStore } from "../configured-store.js";
import { KEY_ENV, loadOptionalSigningKey } from "../../sparkle/signing-key.js";

interface YankFlags {
  config?: string;
  store?: string;
  reason?: string;
  keyFile?: string;
}

const KEY_FILE_HELP = `signing key, needed only when the appcast is signed ('-' reads stdin; default $${KEY_ENV})`;

function report(result: YankResult, verb: string, debug: boolean): void {
  if (debug) for (const line of result.actions) process.stderr.write(`debug: ${line}\n`);
  process.stderr.write(`${verb} ${result.version}; latest is ${result.latest ?? "none (no stable release left)"}\n`);
}

export function registerYank(program: Command): void {
  program
    .command("yank <version>")
    .description("take a version out of the appcast and latest; keeps its record (marked yanked) and artifacts")
    .option("--reason <text>", "why, shown in the catalog and on the downloads page")
    .option("--config <file>", "config file", "relcast.config.json")
    .option("--store <url>", "store URL (overrides config)")
    .option("--key-file <file>", KEY_FILE_HELP)
    .action(async (version: string, flags: YankFlags, command: Command) => {
      const v = normalizeVersion(version);
      if (flags.reason !== undefined && (flags.reason.trim() === "" || flags.reason.length > 500 || /[\r\n]/.test(flags.reason))) {
        throw new RelcastError("E_USAGE", "--reason must be one line of 1 to 500 characters", "give a short reason, e.g. --reason \"crashes on launch on macOS 12\"");
      }
      if (flags.reason !== undefined) requireXmlText(flags.reason, "--reason");
      await withConfiguredStore(flags, {}, {}, async (config, store) => {
        await store.checkReachable();
        const key = await loadOptionalSigningKey(flags.keyFile);
        report(await yankRelease(store, config, v, flags.reason?.trim(), new Date(), { key, warn: createLogger().warn }), "yanked", Boolean(command.optsWithGlobals().debug));
      });
    });
  program
    .command("unyank <version>")
    .description("undo `relcast yank`: the version is offered again (and is latest again if it is the highest)")
    .option("--config <file>", "config file", "relcast.config.json")
    .option("--store <url>", "store URL (overrides config)")
    .option("--key-file <file>", KEY_FILE_HELP)
    .action(async (version: string, flags: YankFlags, command: Command) => {
      const v = normalizeVersion(version);
      await withConfiguredStore(flags, {}, {}, async (config, store) => {
        await store.checkReachable();
        const key = await loadOptionalSigningKey(flags.keyFile);
        report(await unyankRelease(store, config, v, { key, warn: createLogger().warn }), "unyanked", Boolean(command.optsWithGlobals().debug));
      });
    });
}
