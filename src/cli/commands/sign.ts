import { stat } from "node:fs/promises";
import type { Command } from "commander";
import { RelcastError } from "../../core/errors.js";
import { signEd25519, verifyEd25519 } from "../../sparkle/ed25519-stream.js";
import { KEY_ENV, loadSigningKey } from "../../sparkle/signing-key.js";
import { isFeedPath, isReleaseNotesPath, signFeedFile, verifyFeedFile } from "./sign-feed.js";

interface SignFlags {
  keyFile?: string;
  edKeyFile?: string;
  f?: string;
  p?: boolean;
  verify?: boolean;
  publicKey?: string;
  disableSigningWarning?: boolean;
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
async function publicKeyFor(flags: SignFlags, keyFile: string | undefined): Promise<Buffer> {
  return flags.publicKey
    ? decodeExactly(flags.publicKey, 32, "--public-key", "pass the SUPublicEDKey value from the bundle's Info.plist")
    : (await loadSigningKey(keyFile)).publicKey;
}

/** An appcast (`*.xml`, as sign_update decides): signed in place, or its embedded block checked. */
async function signOrVerifyFeed(file: string, signature: string | undefined, flags: SignFlags, keyFile: string | undefined): Promise<void> {
  if (signature) throw new RelcastError("E_USAGE", "an appcast carries its signature inside: pass no signature after it", `run: relcast sign --verify ${file} --public-key <SUPublicEDKey>`);
  if (flags.verify) {
    await verifyFeedFile(file, await publicKeyFor(flags, keyFile));
    process.stdout.write("feed signature is valid\n");
    return;
  }
  const name = await signFeedFile(file, await loadSigningKey(keyFile));
  if (!flags.p) process.stdout.write(`<!-- Updated signature inside ${name} -->\n`);
}

/**
 * `relcast sign`: a drop-in for Sparkle's `sign_update` (same flags, same
 * output line), streaming the file so memory stays flat for any size. An
 * appcast (`*.xml`) is signed in place with the block Sparkle 2.9 reads.
 */
export function registerSign(program: Command): void {
  program
    .command("sign")
    .description("sign a file with Ed25519 and print what Sparkle's sign_update prints (an appcast .xml is signed in place), or check a signature with --verify")
    .argument("<file>", "the archive, release-notes file or appcast (.xml) to sign or check")
    .argument("[signature]", "with --verify: the base64 edSignature to check (not for an appcast: its signature is inside)")
    .option("--key-file <file>", `private key file ('-' reads stdin; default $${KEY_ENV})`)
    .option("--ed-key-file <file>", "same as --key-file (sign_update's name)")
    .option("-f <file>", "same as --key-file (sign_update's short form)")
    .option("-p", "print only the signature")
    .option("--verify", "check <signature> over <file> (an appcast: its embedded block) instead of signing; exit 0 if valid, 1 if not (an appcast: 10)")
    .option("--public-key <base64>", "with --verify: the SUPublicEDKey to check against (default: the key file's public key)")
    .option("--disable-signing-warning", "accepted for sign_update compatibility; relcast never adds the warning comment")
    .action(async (file: string, signature: string | undefined, flags: SignFlags) => {
      const keyFile = flags.keyFile ?? flags.edKeyFile ?? flags.f;
      const size = await fileSize(file);
      if (isFeedPath(file)) return signOrVerifyFeed(file, signature, flags, keyFile);
      if (flags.verify) {
        if (!signature) throw new RelcastError("E_USAGE", "--verify needs the signature after the file", "run: relcast sign --verify <file> <signature> --public-key <SUPublicEDKey>");
        const sig = decodeExactly(signature, 64, "the signature", "pass the edSignature value exactly as the appcast has it");
        const publicKey = await publicKeyFor(flags, keyFile);
        const valid = await verifyEd25519(publicKey, sig, { file });
        process.stdout.write(valid ? "signature is valid\n" : "signature is NOT valid for this file and public key\n");
        process.exitCode = valid ? 0 : 1;
        return;
      }
      if (signature) throw new RelcastError("E_USAGE", `unexpected argument "${signature.slice(0, 20)}"`, "to check a signature pass --verify; to sign, pass only the file");
      const key = await loadSigningKey(keyFile);
      const sig = (await signEd25519(key, { file })).toString("base64");
      // A release-notes file's line is for <sparkle:releaseNotesLink>, whose attribute is sparkle:length.
      process.stdout.write(flags.p ? `${sig}\n` : `sparkle:edSignature="${sig}" ${isReleaseNotesPath(file) ? "sparkle:length" : "length"}="${size}"\n`);
    });
}
