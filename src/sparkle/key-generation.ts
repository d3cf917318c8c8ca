import { randomBytes } from "node:crypto";
import { constants } from "node:fs";
import { link, open, rename, unlink } from "node:fs/promises";
import path from "node:path";
import { RelcastError } from "../core/errors.js";
import { registerSecret } from "../core/secrets.js";
import { expandSeed } from "./ed25519-stream.js";

export interface GeneratedKey {
  /** base64 of the 32-byte seed, the format `generate_keys -x` exports. */
  seedBase64: string;
  publicKeyBase64: string;
}

export function generateSigningKey(): GeneratedKey {
  const seed = randomBytes(32);
  const seedBase64 = seed.toString("base64");
  registerSecret(seedBase64);
  return { seedBase64, publicKeyBase64: expandSeed(seed).publicKey.toString("base64") };
}

/**
 * Writes the key file with mode 0600 from the first byte (the file is created
 * that way, not chmod-ed after), refusing to replace an existing key unless
 * `force`: losing a signing key strands every installed copy.
 */
export async function writeKeyFile(file: string, seedBase64: string, force: boolean): Promise<void> {
  const target = path.resolve(file);
  const temp = `${target}.tmp-${process.pid}`;
  const handle = await open(temp, constants.O_CREAT | constants.O_EXCL | constants.O_WRONLY, 0o600).catch((err: NodeJS.ErrnoException) => {
    throw new RelcastError("E_INPUT", `cannot create key file ${file} (${err.code})`, "choose a writable folder for --out");
  });
  try {
    await handle.writeFile(`${seedBase64}\n`);
    await handle.sync();
  } finally {
    await handle.close();
  }
  try {
    if (force) await rename(temp, target);
    else {
      // link() fails with EEXIST if a key appeared meanwhile: no window in which an existing key is replaced.
      await link(temp, target).catch((err: NodeJS.ErrnoException) => {
        if (err.code === "EEXIST") {
          throw new RelcastError("E_CONFLICT", `key file ${file} already exists; relcast does not overwrite a signing key`, "choose another --out path, or pass --force if you really mean to replace it (installed copies trust the old public key)");
        }
        throw new RelcastError("E_INPUT", `cannot create key file ${file} (${err.code})`, "choose a writable folder for --out");
      });
      await unlink(temp);
    }
  } catch (err) {
    await unlink(temp).catch(() => undefined);
    throw err;
  }
}
