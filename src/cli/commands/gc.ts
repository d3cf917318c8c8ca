import { printable } from "../../core/printable.js";
import type { Command } from "commander";
import { RelcastError } from "../../core/errors.js";
import { withConfiguredStore } from "../configured-store.js";

export function registerGc(program: Command): void {
  program
    .command("gc")
    .description("remove what interrupted runs left behind: temp files, stale locks, incomplete multipart uploads")
    .option("--config <file>", "config file", "relcast.config.json")
    .option("--store <url>", "store URL (overrides config)")
    .option("--older-than <minutes>", "only remove leftovers older than this (default one day: longer than any publish runs)", "1440")
    .action(async (flags: { config?: string; store?: string; olderThan: string }) => {
      const minutes = Number(flags.olderThan);
      if (!Number.isFinite(minutes) || minutes < 0) throw new RelcastError("E_USAGE", `--older-than "${flags.olderThan}" is not a number of minutes`, "pass e.g. --older-than 60 (0 removes everything; only when no publish runs)");
      await withConfiguredStore(flags, {}, {}, async (_config, store) => {
        const removed = await store.sweepIncomplete(new Date(Date.now() - minutes * 60_000));
        for (const line of removed) process.stderr.write(`removed ${printable(line)}\n`);
        process.stderr.write(`gc: removed ${removed.length} leftover(s)\n`);
      });
    });
}
