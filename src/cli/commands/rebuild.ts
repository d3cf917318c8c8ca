import type { Command } from "commander";
import { rebuildFeeds } from "../../release/rebuild.js";
import { withConfiguredStore } from "../configured-store.js";

export function registerRebuild(program: Command): void {
  program
    .command("rebuild")
    .description("regenerate catalog, appcast and public site from the stored release records (repair, migration)")
    .option("--config <file>", "config file", "relcast.config.json")
    .option("--store <url>", "store URL (overrides config)")
    .option("--skip-invalid", "rebuild without records that do not parse (they are listed)")
    .action(async (flags: { config?: string; store?: string; skipInvalid?: boolean }) => {
      await withConfiguredStore(flags, {}, {}, async (config, store) => {
        await store.checkReachable();
        const result = await rebuildFeeds(store, config, { allowSkipped: Boolean(flags.skipInvalid) });
        for (const s of result.skipped) process.stderr.write(`skipped ${s.key}: ${s.reason}\n`);
        process.stderr.write(`rebuilt catalog, appcast and site from ${result.records.length} record(s)\n`);
      });
    });
}
