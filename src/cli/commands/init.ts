import { constants } from "node:fs";
import { open, readFile } from "node:fs/promises";
import path from "node:path";
import type { Command } from "commander";
import { configSchema, PLUGIN_ID_PATTERN } from "../../config/schema.js";
import { describeZodIssues } from "../../core/zod-message.js";
import { RelcastError } from "../../core/errors.js";
import { publicAppcastUrl } from "../../domain/release-layout.js";
import { generateSigningKey, writeKeyFile } from "../../sparkle/key-generation.js";
import { KEY_ENV, parseSigningKey } from "../../sparkle/signing-key.js";
import { schemaReference } from "../schema-reference.js";
import { checkKeyFileName, ignoreInGit } from "./init-gitignore.js";

interface InitFlags {
  config: string;
  keyFile: string;
  pluginId?: string;
  displayName?: string;
  publisher?: string;
  appUrl?: string;
  store?: string;
}

/** "My Bridge_Plugin" → "my-bridge_plugin": a plugin id from the folder name. */
function idFrom(name: string): string {
  const id = name.toLowerCase().replace(/[^a-z0-9._-]+/g, "-").replace(/^[^a-z0-9]+|-+$/g, "");
  return PLUGIN_ID_PATTERN.test(id) ? id : "my-plugin";
}

async function readIfExists(file: string): Promise<string | undefined> {
  return readFile(file, "utf8").catch((err: NodeJS.ErrnoException) => {
    if (err.code === "ENOENT") return undefined;
    throw new RelcastError("E_INPUT", `cannot read ${file} (${err.code})`, "check the file's permissions");
  });
}

/** Creates the file only if it does not exist (O_EXCL): an existing config is never replaced. */
async function createExclusive(file: string, text: string): Promise<boolean> {
  const handle = await open(file, constants.O_CREAT | constants.O_EXCL | constants.O_WRONLY, 0o644).catch((err: NodeJS.ErrnoException) => {
    if (err.code === "EEXIST") return undefined;
    throw new RelcastError("E_INPUT", `cannot create ${file} (${err.code})`, "run relcast init in a folder you can write to");
  });
  if (!handle) return false;
  try {
    await handle.writeFile(text);
  } finally {
    await handle.close();
  }
  return true;
}

function xmlText(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

function plistEntries(feedUrl: string, publicKey: string): string {
  return [
    "<key>SUFeedURL</key>",
    `<string>${xmlText(feedUrl)}</string>`,
    "<key>SUPublicEDKey</key>",
    `<string>${publicKey}</string>`,
    "",
  ].join("\n");
}

/**
 * `relcast init`: a starter relcast.config.json and a signing key, neither
 * ever replaced, and the two Info.plist entries Sparkle needs. Running it
 * again keeps both files and prints the entries again.
 */
export function registerInit(program: Command): void {
  program
    .command("init")
    .description("write a starter relcast.config.json and a signing key (never replacing either) and print the Info.plist entries to add")
    .option("--config <file>", "config file to create", "relcast.config.json")
    .option("--key-file <file>", "signing key file to create (mode 0600; init adds it to the .gitignore of its folder)", "relcast-signing-key.txt")
    .option("--plugin-id <id>", "plugin id: lower-case letters, digits, '.', '_', '-' (default: from the folder name)")
    .option("--display-name <name>", "name users see (default: the folder name)")
    .option("--publisher <name>", "publisher name", "Example Publisher")
    .option("--app-url <url>", "public root URL of the store (where the appcast and downloads are served)", "https://updates.example.com")
    .option("--store <url>", "where releases are written: file://./public-store or s3://bucket[/prefix]", "file://./public-store")
    .action(async (flags: InitFlags) => {
      const configFile = path.resolve(flags.config);
      const folder = path.basename(path.dirname(configFile));
      const starter = {
        $schema: schemaReference(path.dirname(configFile)),
        pluginId: flags.pluginId ?? idFrom(folder),
        displayName: flags.displayName ?? folder,
        publisher: flags.publisher,
        appUrl: flags.appUrl,
        channel: "stable",
        store: flags.store,
      };

      checkKeyFileName(flags.keyFile);
      let configText = await readIfExists(configFile);
      let created = false;
      if (configText === undefined) {
        const parsed = configSchema.safeParse(starter);
        if (!parsed.success) throw new RelcastError("E_USAGE", describeZodIssues(parsed.error, "relcast init", starter), "fix the flag for the field named above");
        configText = JSON.stringify(starter, null, 2) + "\n";
        created = await createExclusive(configFile, configText);
        if (!created) configText = (await readIfExists(configFile)) ?? configText;
      }
      let raw: unknown;
      try {
        raw = JSON.parse(configText);
      } catch {
        throw new RelcastError("E_CONFIG", `${configFile} exists but is not valid JSON`, "fix it, or move it away and run relcast init again");
      }
      const config = configSchema.safeParse(raw);
      if (!config.success) throw new RelcastError("E_CONFIG", describeZodIssues(config.error, configFile, raw, configSchema), "fix the field named above (relcast init keeps an existing config)");
      process.stderr.write(created ? `wrote ${flags.config}: edit publisher, appUrl and store before the first publish\n` : `kept the existing ${flags.config}\n`);

      // Before the key exists: a key written first and ignored after could be committed in between.
      const gitignore = await ignoreInGit(flags.keyFile);
      const existingKey = await readIfExists(flags.keyFile);
      let publicKey: string;
      if (existingKey !== undefined) {
        publicKey = parseSigningKey(existingKey, `key file ${flags.keyFile}`).publicKeyBase64;
        process.stderr.write(`kept the existing signing key ${flags.keyFile}\n`);
      } else {
        const key = generateSigningKey();
        await writeKeyFile(flags.keyFile, key.seedBase64, false);
        publicKey = key.publicKeyBase64;
        process.stderr.write(
          `wrote the signing key to ${flags.keyFile} (mode 0600). Keep it secret; store its content as the CI secret ${KEY_ENV}.\n` +
            "Losing it means installed copies can no longer be updated: keep a backup offline.\n",
        );
      }

      process.stderr.write(
        gitignore === "outside"
          ? `${flags.keyFile} is outside the repository: no .gitignore written (keep it out of any repository yourself)\n`
          : gitignore
          ? `added ${flags.keyFile} to ${path.relative(process.cwd(), gitignore) || gitignore}, so git add -A leaves the key out (commit the .gitignore)\n`
          : `${flags.keyFile} is already in its folder's .gitignore\n`,
      );
      process.stderr.write("add these entries to the bundle's Info.plist (inside the top <dict>):\n");
      process.stdout.write(plistEntries(publicAppcastUrl(config.data.appUrl, config.data.pluginId), publicKey));
    });
}
