import { createLogger } from "../../core/logger.js";
import { printableJson } from "../../core/printable.js";
import { Option, type Command } from "commander";
import { RelcastError } from "../../core/errors.js";
import { parseIsoTimestamp } from "../../core/iso-timestamp.js";
import { normalizeVersion } from "../../domain/version-input.js";
import { formatRolloutStatus } from "../../domain/rollout-status.js";
import { pauseRollout, resumeRollout, type RolloutResult } from "../../release/rollout.js";
import { readRolloutStatus } from "../../release/rollout-status.js";
import { withConfiguredStore } from "../configured-store.js";
import { KEY_ENV, loadOptionalSigningKey } from "../../sparkle/signing-key.js";

interface RolloutFlags {
  config?: string;
  store?: string;
  keyFile?: string;
  at?: string;
  json?: boolean;
}

const KEY_FILE_HELP = `signing key, needed only when the appcast is signed ('-' reads stdin; default $${KEY_ENV})`;

const HELP = `
A phased rollout (publish --phased-rollout-interval <seconds>) offers an
update to Sparkle's 7 groups of installed copies one interval apart: group i
from pubDate + i x interval on (background checks; checks a user starts and
critical updates ignore the groups).

  pause    takes the release out of the appcast (and out of latest) now;
           copies already updated stay updated
  resume   puts it back with pubDate = original pubDate + all the time spent
           paused, so the next group's turn follows without a gap
  status   each group's turn, and whether the rollout is paused

A pause of a paused rollout, or a resume of a running one, changes nothing
and exits 0. Only a release with a phased rollout can be paused.

Examples:
  relcast rollout pause 1.4.0
  relcast rollout status 1.4.0
  relcast rollout resume 1.4.0
`;

/** The hidden --at: the time it is now (reproducible runs and tests), whole seconds, in UTC. */
function parseAt(text: string | undefined): Date {
  if (text === undefined) return new Date();
  const parsed = parseIsoTimestamp(text);
  if (!parsed.ok) throw new RelcastError("E_USAGE", `--at ${JSON.stringify(text.slice(0, 80))} ${parsed.reason}`, "use a real date and time, e.g. 2026-01-31T12:00:00Z");
  return parsed.date;
}

function report(result: RolloutResult, debug: boolean): void {
  if (debug) for (const line of result.actions) process.stderr.write(`debug: ${line}\n`);
  process.stderr.write(`${result.message}\n`);
  if (result.changed) process.stderr.write(`latest is ${result.latest ?? "none (no stable release offered)"}\n`);
}

function common(command: Command): Command {
  return command
    .option("--config <file>", "config file", "relcast.config.json")
    .option("--store <url>", "store URL (overrides config)")
    .addOption(new Option("--at <iso>", "the time to act at (reproducible runs)").hideHelp());
}

export function registerRollout(program: Command): void {
  const rollout = program.command("rollout").description("pause, resume or inspect a phased rollout").addHelpText("after", HELP);
  for (const [verb, run, description] of [
    ["pause", pauseRollout, "take a phased rollout out of the appcast and latest until it is resumed"],
    ["resume", resumeRollout, "put a paused rollout back; each group's turn continues where it stood"],
  ] as const) {
    common(rollout.command(`${verb} <version>`).description(description))
      .option("--key-file <file>", KEY_FILE_HELP)
      .action(async (version: string, flags: RolloutFlags, command: Command) => {
        const v = normalizeVersion(version);
        const now = parseAt(flags.at);
        await withConfiguredStore(flags, {}, {}, async (config, store) => {
          await store.checkReachable();
          const key = await loadOptionalSigningKey(flags.keyFile);
          report(await run(store, config, v, now, { key, warn: createLogger().warn }), Boolean(command.optsWithGlobals().debug));
        });
      });
  }
  common(rollout.command("status [version]").description("each group's turn of one phased rollout (or of every release with one), and whether it is paused"))
    .option("--json", "print the status as JSON")
    .action(async (version: string | undefined, flags: RolloutFlags) => {
      const v = version === undefined ? undefined : normalizeVersion(version);
      const now = parseAt(flags.at);
      await withConfiguredStore(flags, {}, {}, async (_config, store) => {
        const status = await readRolloutStatus(store, v, now);
        if (flags.json) {
          process.stdout.write(printableJson({ at: now.toISOString(), ...status }, 2) + "\n");
          return;
        }
        if (status.releases.length === 0) process.stdout.write("no release has a phased rollout\n");
        for (const s of status.releases) process.stdout.write([...formatRolloutStatus(s), ...(s.problem ? [`  problem: ${s.problem}`] : [])].join("\n") + "\n");
      });
    });
}
