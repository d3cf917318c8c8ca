import { mkdir, readFile, rename, writeFile } from "node:fs/promises";
import path from "node:path";
import type { TokenSet } from "./token-client.js";

/**
 * Where a TokenHolder keeps the latest token set, so a restarted process
 * continues with the newest refresh token instead of a spent one.
 */
export interface TokenPersistence {
  load(): Promise<TokenSet | undefined>;
  save(tokens: TokenSet): Promise<void>;
}

export function memoryPersistence(initial?: TokenSet): TokenPersistence {
  let value = initial;
  return {
    load: async () => value,
    save: async (tokens) => {
      value = tokens;
    },
  };
}

/** A JSON file readable only by its owner, replaced atomically (write then rename). */
export function filePersistence(file: string): TokenPersistence {
  return {
    async load() {
      try {
        return JSON.parse(await readFile(file, "utf8")) as TokenSet;
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === "ENOENT") return undefined;
        throw err;
      }
    },
    async save(tokens) {
      await mkdir(path.dirname(file), { recursive: true });
      const temp = `${file}.${process.pid}.tmp`;
      await writeFile(temp, JSON.stringify(tokens), { mode: 0o600 });
      await rename(temp, file);
    },
  };
}
