import type { Command } from "commander";
import { rebuildFeeds } from "../../release/rebuild.js";
import { withConfiguredStore } from "../configured-store.js";
import { KEY_ENV, loadOptionalSigningKey } from "../../sparkle/signing-key.js";

export function registerRebuild(program: Command): void {
  program
    .command("rebuild")
    .description("regenerate catalog, appcast and public site from the stored release records (repair, migration)")
    .option("--config <file>", "config file", "relcast.config.json")
    .option("--store <url>", "store URL (overrides config)")
    .option("--skip-invalid", "rebuild without records that do not parse (they are listed)")
    .option("--key-file <file>", `signing key, needed only when the appcast is signed ('-' reads stdin; default $${KEY_ENV})`)
    .action(async (flags: { config?: string; store?: string; skipInvalid?: boolean; keyFile?: string }) => {
      await withConfiguredStore(flags, {}, {}, async (config, store) => {
        await store.checkReachable();
        const key = await loadOptionalSigningKey(flags.keyFile);
        const result = await rebuildFeeds(store, config, { allowSkipped: Boolean(flags.skipInvalid), signing: { key } });
        for (const s of result.skipped) process.stderr.write(`skipped ${s.key}: ${s.reason}\n`);
        process.stderr.write(`rebuilt catalog, appcast and site from ${result.records.length} record(s)\n`);
      });
    });
}
