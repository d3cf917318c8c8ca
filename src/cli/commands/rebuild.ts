import { printable } from "../../core/printable.js";
import type { Command } from "commander";
import { rebuildFeeds, type RebuildChange } from "../../release/rebuild.js";
import { withConfiguredStore } from "../configured-store.js";
import { KEY_ENV, loadOptionalSigningKey } from "../../sparkle/signing-key.js";

const VERBS = { adds: "add", drops: "drop", yanks: "mark yanked", unyanks: "mark not yanked", changes: "change" } as const;

/** "change 1.0.0 (stable): summary, autoupdate.minimumSystemVersion differ from the catalog (taken from its record)". */
function describeChange(c: RebuildChange): string {
  const what = `${VERBS[c.change]} ${c.version} (${c.channel})`;
  return c.fields ? `${what}: ${c.fields.join(", ")} taken from its record (the catalog says otherwise; relcast verify shows both values)` : what;
}

export function registerRebuild(program: Command): void {
  program
    .command("rebuild")
    .description("regenerate catalog, appcast and public site from the stored release records (repair, migration)")
    .option("--config <file>", "config file", "relcast.config.json")
    .option("--store <url>", "store URL (overrides config)")
    .option("--skip-invalid", "rebuild without records that do not parse or lie in another version's folder (they are listed)")
    .option("--dry-run", "print what the rebuild would add to, drop from or change in the catalog; write nothing")
    .option("--key-file <file>", `signing key, needed only when the appcast is signed ('-' reads stdin; default $${KEY_ENV})`)
    .action(async (flags: { config?: string; store?: string; skipInvalid?: boolean; dryRun?: boolean; keyFile?: string }) => {
      await withConfiguredStore(flags, {}, {}, async (config, store) => {
        await store.checkReachable();
        const key = await loadOptionalSigningKey(flags.keyFile);
        const result = await rebuildFeeds(store, config, { allowSkipped: Boolean(flags.skipInvalid), dryRun: Boolean(flags.dryRun), signing: { key } });
        for (const s of result.skipped) process.stderr.write(`skipped ${printable(s.key)}: ${printable(s.reason)}\n`);
        if (result.currentProblem) process.stderr.write(`the current catalog cannot be read (${result.currentProblem}); every release counts as added\n`);
        const verb = result.written ? "" : "would ";
        for (const c of result.changes) process.stderr.write(`${verb}${describeChange(c)}\n`);
        if (result.changes.length === 0) process.stderr.write(`${verb}change no release in the catalog\n`);
        process.stderr.write(result.written ? `rebuilt catalog, appcast and site from ${result.records.length} record(s)\n` : `dry run: would rebuild catalog, appcast and site from ${result.records.length} record(s); nothing written\n`);
      });
    });
}
