import type { Command } from "commander";
import { generateSigningKey, writeKeyFile } from "../../sparkle/key-generation.js";
import { KEY_ENV, loadSigningKey } from "../../sparkle/signing-key.js";

/** `relcast keys generate|public`: interchangeable with Sparkle's `generate_keys`. */
export function registerKeys(program: Command): void {
  const keys = program.command("keys").description("create an Ed25519 signing key or print its public key (SUPublicEDKey)");
  keys
    .command("generate")
    .description("create a new key (base64 32-byte seed, as `generate_keys -x` exports it, mode 0600); prints only the public key")
    .requiredOption("--out <file>", "where to write the private key")
    .option("--force", "replace an existing key file")
    .action(async (flags: { out: string; force?: boolean }) => {
      const key = generateSigningKey();
      await writeKeyFile(flags.out, key.seedBase64, flags.force === true);
      process.stderr.write(`wrote private key to ${flags.out} (mode 0600); keep it secret, store it as a CI secret (${KEY_ENV})\n`);
      process.stderr.write("add this to the bundle's Info.plist as SUPublicEDKey:\n");
      process.stdout.write(`${key.publicKeyBase64}\n`);
    });
  keys
    .command("public")
    .description("print the base64 public key of a signing key, the value for SUPublicEDKey")
    .option("--key-file <file>", `private key file ('-' reads stdin; default $${KEY_ENV})`)
    .action(async (flags: { keyFile?: string }) => {
      const key = await loadSigningKey(flags.keyFile);
      process.stdout.write(`${key.publicKeyBase64}\n`);
    });
}
