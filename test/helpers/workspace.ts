import { registerSecret, registerStoreDir } from "./secrets.js";
import { walkFiles } from "./walk-files.js";
import { generateKeyPairSync } from "node:crypto";
import { mkdtemp, readFile, stat, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { makeSamplePlugin } from "../../scripts/sample-plugin.mjs";

export interface TestKey {
  seedBase64: string;
  publicKeyBase64: string;
  seed: Buffer;
  publicKey: Buffer;
}

export function newKey(): TestKey {
  const { privateKey, publicKey } = generateKeyPairSync("ed25519");
  const seed = privateKey.export({ format: "der", type: "pkcs8" }).subarray(-32);
  const pub = publicKey.export({ format: "der", type: "spki" }).subarray(-32);
  registerSecret(seed.toString("base64"), seed.toString("hex"), Buffer.concat([seed, pub]).toString("base64"));
  return { seed, publicKey: pub, seedBase64: seed.toString("base64"), publicKeyBase64: pub.toString("base64") };
}

export interface Workspace {
  dir: string;
  key: TestKey;
  keyFile: string;
  configFile: string;
  storeDir: string;
  plugin(version: string, build: number, extra?: { publicKey?: string | null; dmgBytes?: number; name?: string; icon?: { file: string; bytes: Buffer }; plist?: Record<string, string> }): Promise<{ app: string; dmg: string; notes: string }>;
  publishArgs(p: { app: string; dmg: string; notes: string }, version: string, more?: string[]): string[];
}

export async function makeWorkspace(configExtra: Record<string, unknown> = {}): Promise<Workspace> {
  const dir = await mkdtemp(path.join(os.tmpdir(), "relcast-test-"));
  const key = newKey();
  const keyFile = path.join(dir, "key.txt");
  await writeFile(keyFile, key.seedBase64 + "\n", { mode: 0o600 });
  const storeDir = path.join(dir, "store");
  registerStoreDir(storeDir);
  const configFile = path.join(dir, "relcast.config.json");
  await writeFile(configFile, JSON.stringify({
    pluginId: "bridge-plugin", displayName: "Bridge Plugin", publisher: "Example Tools",
    // Deltas cost a few hundred ms per older release on every publish; the suites that test them opt in.
    appUrl: "https://updates.example.com", timezone: "America/New_York", store: "file://./store", deltas: { maximum: 0 }, ...configExtra,
  }, null, 2));
  return {
    dir, key, keyFile, configFile, storeDir,
    plugin: (version, build, extra = {}) => makeSamplePlugin({
      dir: path.join(dir, "build"), version, build,
      ...(extra.publicKey === null ? {} : { publicKey: extra.publicKey ?? key.publicKeyBase64 }),
      ...(extra.dmgBytes !== undefined ? { dmgBytes: extra.dmgBytes } : {}),
      ...(extra.name !== undefined ? { name: extra.name } : {}),
      ...(extra.icon !== undefined ? { icon: extra.icon } : {}),
      ...(extra.plist !== undefined ? { plist: extra.plist } : {}),
    }),
    publishArgs: (p, version, more = []) => ["publish", "--config", configFile, "--key-file", keyFile, "--version", version, "--app", p.app, "--dmg", p.dmg, "--notes", p.notes, ...more],
  };
}

/** Every file under a folder with size and mtime: equal snapshots mean nothing was written. */
export async function snapshotTree(root: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for await (const p of walkFiles(root)) {
    const st = await stat(p);
    out[path.relative(root, p)] = `${st.size}:${st.mtimeMs}:${(await readFile(p)).subarray(0, 64).toString("hex")}`;
  }
  return out;
}
