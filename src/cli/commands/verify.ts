import { appcastLimit } from "../../domain/appcast.js";
import { access } from "node:fs/promises";
import type { Command } from "commander";
import { DEFAULT_CONFIG_FILE, loadConfig } from "../../config/load-config.js";
import type { RelcastConfig } from "../../config/schema.js";
import { RelcastError } from "../../core/errors.js";
import { openStore } from "../../store/open-store.js";
import { CACHE_IMMUTABLE, CACHE_NO_CACHE } from "../../store/content-types.js";
import { verifyStore } from "../../verify/verify-store.js";
import { failingNames, formatVerifyReport } from "../../verify/verify-table.js";
import { printableJson } from "../../core/printable.js";

interface VerifyFlags {
  config?: string;
  store?: string;
  publicKey?: string;
  json?: boolean;
}

function parsePublicKey(text: string | undefined): Buffer | undefined {
  if (text === undefined) return undefined;
  const bytes = /^[A-Za-z0-9+/]+={0,2}$/.test(text.trim()) ? Buffer.from(text.trim(), "base64") : Buffer.alloc(0);
  if (bytes.length !== 32) throw new RelcastError("E_USAGE", `--public-key is not the base64 of a 32-byte Ed25519 public key`, "pass the SUPublicEDKey value from the app's Info.plist (relcast keys public prints it)");
  return bytes;
}

/** The config when there is one; without it, --store alone is enough (the catalog names the plugin). */
async function optionalConfig(flags: VerifyFlags): Promise<RelcastConfig | undefined> {
  if (flags.config) return loadConfig(flags.config, { store: flags.store });
  const present = await access(DEFAULT_CONFIG_FILE).then(() => true, () => false);
  if (present) return loadConfig(DEFAULT_CONFIG_FILE, { store: flags.store });
  if (flags.store) return undefined;
  throw new RelcastError("E_CONFIG", `no ${DEFAULT_CONFIG_FILE} here and no --store given`, "pass --config <file> or --store <url>");
}

export function registerVerify(program: Command): void {
  program
    .command("verify")
    .description("download what catalog and appcast point at and check sizes, hashes, signatures, zips, Info.plist versions, build order, latest and the public site")
    .option("--config <file>", `config file (default ${DEFAULT_CONFIG_FILE} when present)`)
    .option("--store <url>", "store URL (overrides config)")
    .option("--public-key <b64>", "SUPublicEDKey to check signatures with (default: each archive's own SUPublicEDKey)")
    .option("--json", "print the report as JSON on stdout")
    .action(async (flags: VerifyFlags) => {
      const publicKey = parsePublicKey(flags.publicKey);
      const config = await optionalConfig(flags);
      const store = config
        ? await openStore(config.store, flags.store ? process.cwd() : config.baseDir, { s3: config.s3 })
        : await openStore(flags.store!, process.cwd());
      try {
        const report = await verifyStore(store, {
          publicKey, pluginId: config?.pluginId, appUrl: config?.appUrl, notesPages: config?.appcast?.releaseNotes === "page", maxItemsPerChannel: appcastLimit(config ?? {}), signedFeed: config?.appcast?.signedFeed, site: config, listAll: flags.json === true,
          cacheControl: config && { immutable: config.cacheControl?.immutable ?? CACHE_IMMUTABLE, mutable: config.cacheControl?.mutable ?? CACHE_NO_CACHE },
        });
        process.stdout.write(flags.json ? printableJson(report, 2) + "\n" : formatVerifyReport(report));
        if (!report.ok) {
          throw new RelcastError("E_VERIFY", `verify found problems in ${failingNames(report).join(", ")}`, "read the problem lines above: each names its fix (`relcast rebuild` repairs feeds, `relcast site sync --repair` public copies whose bytes are wrong; a damaged object under releases/ must be restored from a backup or the build published again under a new version)");
        }
      } finally {
        await store.close?.();
      }
    });
}
