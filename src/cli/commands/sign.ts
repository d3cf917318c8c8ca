import { stat } from "node:fs/promises";
import type { Command } from "commander";
import { RelcastError } from "../../core/errors.js";
import { signEd25519, verifyEd25519 } from "../../sparkle/ed25519-stream.js";
import { KEY_ENV, loadSigningKey } from "../../sparkle/signing-key.js";

interface SignFlags {
  keyFile?: string;
  edKeyFile?: string;
  f?: string;
  p?: boolean;
  verify?: boolean;
  publicKey?: string;
}

const STRICT_BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

function decodeExactly(value: string, bytes: number, what: string, hint: string): Buffer {
  const decoded = STRICT_BASE64.test(value) ? Buffer.from(value, "base64") : Buffer.alloc(0);
  if (decoded.length !== bytes) throw new RelcastError("E_USAGE", `${what} is not the base64 of ${bytes} bytes`, hint);
  return decoded;
}

async function fileSize(file: string): Promise<number> {
  try {
    const info = await stat(file);
    if (!info.isFile()) throw new RelcastError("E_INPUT", `${file} is not a regular file`, "pass the archive to sign (the zip or dmg users download)");
    return info.size;
  } catch (err) {
    if (err instanceof RelcastError) throw err;
    throw new RelcastError("E_INPUT", `cannot read ${file} (${(err as NodeJS.ErrnoException).code})`, "pass the path of the archive to sign");
  }
}

/**
 * `relcast sign`: a drop-in for Sparkle's `sign_update` (same flags, same
 * output line), streaming the file so memory stays flat for any size.
 */
export function registerSign(program: Command): void {
  program
    .command("sign")
    .description("sign a file with Ed25519 and print what Sparkle's sign_update prints, or check a signature with --verify")
    .argument("<file>", "the archive to sign or check")
    .argument("[signature]", "with --verify: the base64 edSignature to check")
    .option("--key-file <file>", `private key file ('-' reads stdin; default $${KEY_ENV})`)
    .option("--ed-key-file <file>", "same as --key-file (sign_update's name)")
    .option("-f <file>", "same as --key-file (sign_update's short form)")
    .option("-p", "print only the signature")
    .option("--verify", "check <signature> over <file> instead of signing; exit 0 if valid, 1 if not")
    .option("--public-key <base64>", "with --verify: the SUPublicEDKey to check against (default: the key file's public key)")
    .action(async (file: string, signature: string | undefined, flags: SignFlags) => {
      const keyFile = flags.keyFile ?? flags.edKeyFile ?? flags.f;
      const size = await fileSize(file);
      if (flags.verify) {
        if (!signature) throw new RelcastError("E_USAGE", "--verify needs the signature after the file", "run: relcast sign --verify <file> <signature> --public-key <SUPublicEDKey>");
        const sig = decodeExactly(signature, 64, "the signature", "pass the edSignature value exactly as the appcast has it");
        const publicKey = flags.publicKey
          ? decodeExactly(flags.publicKey, 32, "--public-key", "pass the SUPublicEDKey value from the bundle's Info.plist")
          : (await loadSigningKey(keyFile)).publicKey;
        const valid = await verifyEd25519(publicKey, sig, { file });
        process.stdout.write(valid ? "signature is valid\n" : "signature is NOT valid for this file and public key\n");
        process.exitCode = valid ? 0 : 1;
        return;
      }
      if (signature) throw new RelcastError("E_USAGE", `unexpected argument "${signature.slice(0, 20)}"`, "to check a signature pass --verify; to sign, pass only the file");
      const key = await loadSigningKey(keyFile);
      const sig = (await signEd25519(key, { file })).toString("base64");
      process.stdout.write(flags.p ? `${sig}\n` : `sparkle:edSignature="${sig}" length="${size}"\n`);
    });
}
