// Builds a folder store that holds `count` releases, for the history benchmark. The first
// release is published for real; the others are its record with another version, build and
// date, and hard links to its artifacts and downloads (so the store is complete without 10,000 copies).
// Catalog, appcast and index are then rebuilt from the records (`relcast rebuild`) and the
// public site is synced (`relcast site sync`), as a store that grew by publishes holds them.
import { execFileSync } from "node:child_process";
import { link, mkdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { randomBytes } from "node:crypto";
import { makeSamplePlugin } from "../sample-plugin.mjs";

const TEMPLATE_VERSION = "0.0.1";

/** Version i (1-based) of the generated history: 0.0.1 … 0.9.999, 1 release an hour from 2020. */
export function historyVersion(i) {
  return `0.${Math.floor(i / 1000)}.${i % 1000}`;
}

/** dmgBytes and extraBytes (a random resource in the bundle) size the artifacts every release shares. */
export async function makeHistoryStore({ cli, config, keyFile, publicKey, storeDir, work, count, dmgBytes, extraBytes = 0 }) {
  const plugin = await makeSamplePlugin({ dir: work, version: TEMPLATE_VERSION, build: 1, publicKey, ...(dmgBytes ? { dmgBytes } : {}) });
  if (extraBytes > 0) await writeFile(path.join(plugin.app, "Contents", "Resources", "payload.bin"), randomBytes(extraBytes));
  execFileSync(process.execPath, [cli, "publish", "--config", config, "--version", TEMPLATE_VERSION, "--app", plugin.app, "--dmg", plugin.dmg,
    "--notes", plugin.notes, "--key-file", keyFile, "--published-at", "2020-01-01T00:00:00.000Z", "--json"], { stdio: ["ignore", "ignore", "pipe"], maxBuffer: 64 << 20 });
  const settings = JSON.parse(await readFile(config, "utf8"));
  const template = await readFile(path.join(storeDir, "releases", TEMPLATE_VERSION, "release.json"), "utf8");
  const start = Date.parse("2020-01-01T00:00:00.000Z") / 1000;
  for (let i = 2; i <= count; i++) {
    const version = historyVersion(i);
    const record = JSON.parse(template.replaceAll(TEMPLATE_VERSION, version));
    const seconds = start + i * 3600;
    const iso = new Date(seconds * 1000).toISOString();
    record.publishedAt = { _seconds: seconds, _nanoseconds: 0 };
    record.updatedAt = { _seconds: seconds, _nanoseconds: 0 };
    record.publishedAtIso = iso;
    record.publishedAtLocal = iso.replace("T", " ").replace(/\.\d+Z$/, "");
    if (record.autoupdate) record.autoupdate.buildNumber = i;
    await mkdir(path.join(storeDir, "releases", version), { recursive: true });
    await writeFile(path.join(storeDir, "releases", version, "release.json"), JSON.stringify(record, null, 2) + "\n");
    for (const ext of ["dmg", "zip"]) {
      const name = (v) => `${settings.pluginId}-${v}.${ext}`;
      const template = path.join(storeDir, "releases", TEMPLATE_VERSION, name(TEMPLATE_VERSION));
      await link(template, path.join(storeDir, "releases", version, name(version)));
      await link(template, path.join(storeDir, "downloads", name(version)));
    }
  }
  // Catalog, appcast and catalog index as relcast writes them, from the records.
  execFileSync(process.execPath, [cli, "rebuild", "--config", config], { stdio: ["ignore", "ignore", "pipe"], maxBuffer: 64 << 20 });
  execFileSync(process.execPath, [cli, "site", "sync", "--config", config], { stdio: ["ignore", "ignore", "pipe"], maxBuffer: 64 << 20 });
}
