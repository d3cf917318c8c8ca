import { cp, mkdtemp, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { registerStoreDir } from "./secrets.js";
import type { Workspace } from "./workspace.js";

/**
 * A workspace of a test's own: a copy of `base`'s config (its store is `file://./store`, relative to the config)
 * beside a copy of the saved store folder `from`, in a new folder under base.dir. Tests that each start from the
 * same saved store then run at the same time instead of taking turns putting `base.storeDir` back.
 * The key, key file and plugin builds stay `base`'s (inputs, never written by relcast); `config` is merged
 * over the copied config (a test of a config change). Not for a test of what holds while the catalog keeps its
 * ETag: a folder store's ETag includes the inode, which no copy keeps.
 */
export async function ownWorkspace(base: Workspace, from: string, config?: Record<string, unknown>): Promise<Workspace> {
  const dir = await mkdtemp(path.join(base.dir, "own-"));
  const configFile = path.join(dir, path.basename(base.configFile));
  const storeDir = path.join(dir, "store");
  await cp(base.configFile, configFile);
  if (config) {
    await writeFile(configFile, JSON.stringify({ ...JSON.parse(await readFile(configFile, "utf8")), ...config }, null, 2));
  }
  await cp(from, storeDir, { recursive: true, verbatimSymlinks: true });
  registerStoreDir(storeDir);
  return {
    ...base, dir, configFile, storeDir,
    publishArgs: (p, version, more = []) => ["publish", "--config", configFile, "--key-file", base.keyFile, "--version", version, "--app", p.app, "--dmg", p.dmg, "--notes", p.notes, ...more],
  };
}
