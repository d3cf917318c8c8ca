import { cp, mkdtemp } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { registerStoreDir } from "./secrets.js";
import type { Workspace } from "./workspace.js";

/**
 * A copy of a folder-store workspace (config, signing key and the store its
 * publishes wrote) in a new temp folder, so tests that each need the same
 * published store start from one publish instead of publishing it again.
 * The config names its store relative to itself (`file://./store`), so the
 * copy's config opens the copy's store; links are copied as links.
 * `plugin` still builds into the original's folder (the builds are inputs,
 * never written by relcast).
 */
export async function cloneWorkspace(ws: Workspace): Promise<Workspace> {
  const dir = await mkdtemp(path.join(os.tmpdir(), "relcast-clone-"));
  await cp(ws.dir, dir, { recursive: true, verbatimSymlinks: true });
  const moved = (p: string) => path.join(dir, path.relative(ws.dir, p));
  const configFile = moved(ws.configFile);
  const keyFile = moved(ws.keyFile);
  const storeDir = moved(ws.storeDir);
  registerStoreDir(storeDir);
  return {
    dir, key: ws.key, keyFile, configFile, storeDir,
    plugin: ws.plugin,
    publishArgs: (p, version, more = []) => ["publish", "--config", configFile, "--key-file", keyFile, "--version", version, "--app", p.app, "--dmg", p.dmg, "--notes", p.notes, ...more],
  };
}
