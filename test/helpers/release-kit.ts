import { cp, mkdtemp, rm } from "node:fs/promises";
import path from "node:path";
import { makeSamplePlugin } from "../../scripts/sample-plugin.mjs";
import type { Workspace } from "./workspace.js";

/**
 * A folder store put back to one saved state before each test, at the same
 * path: records name their store by its absolute folder (downloadUrl,
 * objectStore.bucket), so a copy elsewhere would not be the same store. One
 * publish in beforeAll then serves every test that needs "a store holding that
 * release" without publishing it again per test.
 */
export interface SavedStore {
  /** Removes the store folder and copies the saved state back into it. */
  restore(): Promise<void>;
}

export async function saveStore(ws: Workspace): Promise<SavedStore> {
  const saved = path.join(await mkdtemp(path.join(ws.dir, "saved-store-")), "store");
  // verbatimSymlinks: a link is copied as the link it is (fs.cp would otherwise make relative targets absolute).
  await cp(ws.storeDir, saved, { recursive: true, verbatimSymlinks: true, preserveTimestamps: true });
  return {
    restore: async () => {
      await rm(ws.storeDir, { recursive: true, force: true });
      await cp(saved, ws.storeDir, { recursive: true, verbatimSymlinks: true, preserveTimestamps: true });
    },
  };
}

/**
 * The workspace's sample plugin built under a folder of its own (`build-<folder>`), so tests
 * that run at once never rebuild the same bundle under each other (makeSamplePlugin empties
 * its folder first). The same bundle, key and notes as ws.plugin gives (publicKey: another SUPublicEDKey).
 */
export function pluginIn(ws: Workspace, folder: string, version: string, build: number, publicKey = ws.key.publicKeyBase64): Promise<{ app: string; dmg: string; notes: string }> {
  return makeSamplePlugin({ dir: path.join(ws.dir, `build-${folder}`), version, build, publicKey });
}

/**
 * At most `n` of the functions passed run at once (tests marked concurrent share it, so a file never
 * starts more than `n` CLI processes together, whatever vitest's maxConcurrency is).
 */
export function limit(n: number): <T>(fn: () => Promise<T>) => Promise<T> {
  let running = 0;
  const waiting: Array<() => void> = [];
  return async (fn) => {
    if (running >= n) await new Promise<void>((resolve) => waiting.push(resolve));
    else running++;
    try {
      return await fn();
    } finally {
      const next = waiting.shift();
      if (next) next();
      else running--;
    }
  };
}
