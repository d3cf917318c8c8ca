import { randomBytes } from "node:crypto";
import { readFile, realpath, rename, rm, stat, writeFile } from "node:fs/promises";
import path from "node:path";
import { RelcastError } from "../../core/errors.js";
import { feedSignatureProblem, hasCrlfSignatureBlock, signFeed, splitSignedFeed } from "../../sparkle/feed-signature.js";
import type { SigningKey } from "../../sparkle/signing-key.js";

/** sign_update's rule: a path ending in `.xml` or `.XML` is an appcast, signed in place. */
export function isFeedPath(file: string): boolean {
  return file.endsWith(".xml") || file.endsWith(".XML");
}

/** sign_update's release-notes files: their line says `sparkle:length`, for a `<sparkle:releaseNotesLink>`. */
export function isReleaseNotesPath(file: string): boolean {
  return [".html", ".htm", ".md", ".markdown", ".txt"].some((ext) => file.endsWith(ext));
}

async function readFeed(file: string): Promise<{ target: string; bytes: Buffer }> {
  try {
    // sign_update resolves links and rewrites the file they lead to.
    const target = await realpath(file);
    return { target, bytes: await readFile(target) };
  } catch (err) {
    throw new RelcastError("E_INPUT", `cannot read ${file} (${(err as NodeJS.ErrnoException).code})`, "pass the path of the appcast to sign");
  }
}

/**
 * `relcast sign feed.xml`: as `sign_update feed.xml` (with
 * --disable-signing-warning: relcast adds no warning comment), the old
 * signature block is dropped and a new one appended over every byte
 * before it. The file is replaced in one rename, keeping its mode.
 */
export async function signFeedFile(file: string, key: SigningKey): Promise<string> {
  const { target, bytes } = await readFeed(file);
  if (hasCrlfSignatureBlock(bytes) && !splitSignedFeed(bytes).block) {
    throw new RelcastError(
      "E_INPUT",
      `${file} holds a signature block with CRLF line ends (a checkout with autocrlf?); Sparkle cannot read it, and signing again would leave it inside the signed bytes`,
      "convert the file to LF line ends (or remove the old <!-- sparkle-signatures: … --> block) and sign again",
    );
  }
  const signed = await signFeed(bytes, key);
  const temp = path.join(path.dirname(target), `.${path.basename(target)}.relcast-${randomBytes(4).toString("hex")}`);
  try {
    await writeFile(temp, signed, { mode: (await stat(target)).mode & 0o777, flag: "wx" });
    await rename(temp, target);
  } catch (err) {
    await rm(temp, { force: true });
    throw new RelcastError("E_INPUT", `cannot write ${file} (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`, "sign a copy in a folder you can write to");
  }
  return path.basename(target);
}

/** `relcast sign --verify feed.xml`: the block at the end verifies with the public key (else E_SIGNATURE, exit 10). */
export async function verifyFeedFile(file: string, publicKey: Buffer): Promise<void> {
  const { bytes } = await readFeed(file);
  const problem = await feedSignatureProblem(bytes, publicKey);
  if (problem) {
    throw new RelcastError("E_SIGNATURE", `${file} is not validly signed: ${problem}`, "sign it again with the release key (relcast sign <feed.xml> --key-file <file>); apps with SURequireSignedFeed refuse it as it is");
  }
}
