import { realpath } from "node:fs/promises";
import path from "node:path";
import type { Command } from "commander";
import { RelcastError } from "../../core/errors.js";
import { applyTarget } from "../../apply/apply-write.js";
import type { RelcastConfig } from "../../config/schema.js";
import { planSiteSync, refusedCopies, syncSite } from "../../site/site-sync.js";
import { appcastDrift, refreshFeedsForConfig } from "../../release/config-refresh.js";
import { printable } from "../../core/printable.js";
import type { ObjectStore } from "../../store/object-store.js";
import { openStore } from "../../store/open-store.js";
import { withConfiguredStore } from "../configured-store.js";

interface SiteFlags {
  config?: string;
  store?: string;
  out?: string;
  repair?: boolean;
  dryRun?: boolean;
}

/**
 * The one rule of `site sync` and `site build`: when the config changed what
 * the appcast says, the store's feeds are rendered again first
 * (config-refresh.ts; refused on a signed appcast before anything is
 * written), so the site, into the store or a folder, never pairs new pages
 * with the old appcast. Then the site is planned from the source store's
 * feeds (every release's downloads too) and applied to the target.
 */
async function syncPublicSite(source: ObjectStore, target: ObjectStore, config: RelcastConfig, repair = false): Promise<string[]> {
  const done = await refreshFeedsForConfig(source, config);
  await syncSite(applyTarget(source, (line) => done.push(line), target), config, { allDownloads: true, repair });
  return done;
}

/** `site sync --dry-run`: what it would write now (and refuse), from the store's feeds as they are; nothing is written. */
async function previewSync(store: ObjectStore, config: RelcastConfig, repair: boolean): Promise<void> {
  const out = (line: string) => process.stderr.write(`${printable(line)}\n`);
  if ((await appcastDrift(store, config)).stale) out("would first render the feeds again: the config changes what the appcast says (the pages below are planned from the feeds as stored)");
  const plan = await planSiteSync(store, store, config, { allDownloads: true, repair });
  const writes = plan?.writes.filter((w) => w.needed) ?? [];
  for (const w of writes) out(w.op === "copy" ? `would copy ${w.from} to ${w.key} (${w.why})` : w.op === "put" ? `would write ${w.key} (${w.why})` : `would remove ${w.key} (${w.why})`);
  for (const r of plan?.refused ?? []) out(`would refuse: ${r}`);
  // What the store would refuse to write (a link on the way, a folder at the key), checked as the real run meets it.
  const blocked = (await Promise.all(writes.filter((w) => w.op !== "delete").map((w) => store.writeBlocked?.(w.key)))).filter((b): b is string => b !== undefined);
  for (const b of new Set(blocked)) out(`would fail: ${b}`);
  out(`dry run: ${writes.length} write(s)${plan && plan.refused.length > 0 ? `, ${plan.refused.length} refused` : ""}; nothing was written`);
  if (blocked.length > 0) throw new RelcastError("E_STORE", `the store would refuse ${blocked.length} of these writes:\n${[...new Set(blocked)].map((b) => `  ${b}`).join("\n")}`, "fix what each line names, then run this again");
  // The dry run exits as the real run would: a refused copy fails it.
  refusedCopies(plan?.refused ?? [], true);
}

/** The real path of a folder, or of its nearest existing ancestor with the rest appended (the folder may not exist yet). */
async function realFolder(dir: string): Promise<string> {
  const real = await realpath(dir).catch(() => undefined);
  if (real !== undefined) return real;
  const parent = path.dirname(dir);
  return parent === dir ? dir : path.join(await realFolder(parent), path.basename(dir));
}

/**
 * A folder store's keys are its files: a site written into the store root,
 * or anywhere under it (`releases/`, `downloads/`…), would put copies into
 * the store's own namespace. Compared by real paths, so a link to the
 * store is caught too.
 */
async function refuseOutInsideStore(out: string, storeRoot: string): Promise<void> {
  const [realOut, realStore] = await Promise.all([realFolder(out), realFolder(path.resolve(storeRoot))]);
  const rel = path.relative(realStore, realOut);
  if (rel === "") throw new RelcastError("E_USAGE", `--out ${out} is the store itself`, "use `relcast site sync` to write the site into the store, or pick another --out folder");
  if (rel !== ".." && !rel.startsWith(`..${path.sep}`) && !path.isAbsolute(rel)) {
    throw new RelcastError("E_USAGE", `--out ${out} is inside the store (${realStore}): the site's files would land among the store's own keys`, "pick an --out folder outside the store, or use `relcast site sync` to write the site into the store itself");
  }
}

function report(done: string[], where: string): void {
  for (const line of done) process.stderr.write(`${line}\n`);
  process.stderr.write(`public site ${done.length === 0 ? "already up to date" : "written"} in ${where}\n`);
}

export function registerSite(program: Command): void {
  const site = program.command("site").description("the public site at {app_url}: feeds, downloads, index.html, changelog.html and its archive pages");
  site
    .command("sync")
    .description("write the public site into the store itself (older stores, repair); publish does this on its own")
    .option("--config <file>", "config file", "relcast.config.json")
    .option("--store <url>", "store URL (overrides config)")
    .option("--repair", "also hash every public download copy (downloads/, deltas, icons) against its record and rewrite those whose bytes differ, from the release's own hash-checked object (reads every download: slow on big stores)")
    .option("--dry-run", "print what it would write (and, with --repair, rewrite or refuse); write nothing")
    .action(async (flags: SiteFlags) => {
      await withConfiguredStore(flags, {}, {}, async (config, store) => {
        await store.checkReachable();
        if (flags.dryRun) return previewSync(store, config, Boolean(flags.repair));
        report(await syncPublicSite(store, store, config, Boolean(flags.repair)), store.uriFor("index.html").replace(/\/index\.html$/, ""));
      });
    });
  site
    .command("build")
    .description("write the public site as a folder, for GitHub Pages, nginx or any static host (after a config change that shows in the appcast, the store's feeds are rendered again first, as site sync does)")
    .requiredOption("--out <dir>", "folder to write (created; files relcast writes are replaced)")
    .option("--config <file>", "config file", "relcast.config.json")
    .option("--store <url>", "store URL to read (overrides config)")
    .option("--repair", "also hash every download copy already in --out against its record and rewrite those whose bytes differ (a same-size damaged file passes the size check otherwise)")
    .action(async (flags: SiteFlags) => {
      const out = path.resolve(flags.out!);
      await withConfiguredStore(flags, {}, {}, async (config, store) => {
        await store.checkReachable();
        if (store.location.scheme === "file") await refuseOutInsideStore(out, store.location.bucket);
        const target = await openStore(`file://${out}`, process.cwd(), {});
        try {
          await target.checkReachable();
          report(await syncPublicSite(store, target, config, Boolean(flags.repair)), out);
        } finally {
          await target.close?.();
        }
      });
    });
}
