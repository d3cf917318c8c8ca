// `npm run demo`: publishes three releases of the sample plugin to a local
// folder store (demo-out/public-store) and prints where the feeds are.
import { generateKeyPairSync } from "node:crypto";
import { execFileSync } from "node:child_process";
import { mkdir, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { makeSamplePlugin } from "./sample-plugin.mjs";

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const out = path.join(repo, "demo-out");
const cli = path.join(repo, "dist", "cli", "relcast.mjs");

await rm(out, { recursive: true, force: true });
await mkdir(out, { recursive: true });

// A throwaway demo key: the 32-byte seed, base64, as `generate_keys -x` writes it.
const { privateKey, publicKey } = generateKeyPairSync("ed25519");
const seed = privateKey.export({ format: "der", type: "pkcs8" }).subarray(-32);
const pub = publicKey.export({ format: "der", type: "spki" }).subarray(-32);
const keyFile = path.join(out, "demo-signing-key.txt");
await writeFile(keyFile, seed.toString("base64") + "\n", { mode: 0o600 });

const config = {
  pluginId: "bridge-plugin",
  displayName: "Bridge Plugin",
  publisher: "Example Tools",
  appUrl: "https://updates.example.com",
  channel: "stable",
  timezone: "Europe/Berlin",
  store: "file://./public-store",
  assistantIntegration: ["Open the disk image and drag Bridge Plugin to Plugins", "Check it runs: curl http://127.0.0.1:8765/v1/status"],
};
const configFile = path.join(out, "relcast.config.json");
await writeFile(configFile, JSON.stringify(config, null, 2) + "\n");

const releases = [
  { version: "1.0.0", build: 100, at: "2026-09-01T09:00:00.000Z" },
  { version: "1.1.0", build: 110, at: "2026-10-01T09:00:00.000Z" },
  { version: "1.2.0", build: 120, at: "2026-11-01T09:00:00.000Z" },
];
for (const r of releases) {
  const p = await makeSamplePlugin({ dir: path.join(out, "build"), version: r.version, build: r.build, publicKey: pub.toString("base64") });
  execFileSync(process.execPath, [cli, "publish", "--config", configFile, "--version", r.version, "--app", p.app, "--dmg", p.dmg,
    "--notes", p.notes, "--key-file", keyFile, "--published-at", r.at, "--summary", `Bridge Plugin ${r.version}`], { stdio: "inherit" });
}
const store = path.join(out, "public-store");
console.log(`\nDemo store: ${store}`);
console.log(`  catalog: ${path.join(store, "releases", "catalog.json")}`);
console.log(`  appcast: ${path.join(store, "releases", "appcast.xml")}`);
