// Builds a folder store that holds `count` releases, for the history benchmark. The first
// release is published for real; the others are its record with another version, build and
// date, and hard links to its artifacts (so the store is complete without 10,000 copies).
// Catalog and appcast are then written as a publish would leave them, and the public site
// is synced with `relcast site sync`.
import { execFileSync } from "node:child_process";
import { link, mkdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { buildCatalog, serializeCatalog } from "../../dist/src/catalog/catalog.js";
import { renderAppcast } from "../../dist/src/catalog/appcast.js";
import { appcastOptionsFor } from "../../dist/src/catalog/feed-files.js";
import { makeSamplePlugin } from "../sample-plugin.mjs";

const TEMPLATE_VERSION = "0.0.1";

/** Version i (1-based) of the generated history: 0.0.1 … 0.9.999, 1 release an hour from 2020. */
export function historyVersion(i) {
  return `0.${Math.floor(i / 1000)}.${i % 1000}`;
}

export async function makeHistoryStore({ cli, config, keyFile, publicKey, storeDir, work, count }) {
  const plugin = await makeSamplePlugin({ dir: work, version: TEMPLATE_VERSION, build: 1, publicKey });
  execFileSync(process.execPath, [cli, "publish", "--config", config, "--version", TEMPLATE_VERSION, "--app", plugin.app, "--dmg", plugin.dmg,
    "--notes", plugin.notes, "--key-file", keyFile, "--published-at", "2020-01-01T00:00:00.000Z", "--json"], { stdio: ["ignore", "ignore", "pipe"] });
  const settings = JSON.parse(await readFile(config, "utf8"));
  const template = await readFile(path.join(storeDir, "releases", TEMPLATE_VERSION, "release.json"), "utf8");
  const start = Date.parse("2020-01-01T00:00:00.000Z") / 1000;
  const records = [JSON.parse(template)];
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
      await link(path.join(storeDir, "releases", TEMPLATE_VERSION, name(TEMPLATE_VERSION)), path.join(storeDir, "releases", version, name(version)));
    }
    records.push(record);
  }
  const catalog = buildCatalog(settings.pluginId, records);
  await writeFile(path.join(storeDir, "releases", "catalog.json"), serializeCatalog(catalog));
  await writeFile(path.join(storeDir, "releases", "appcast.xml"), renderAppcast(catalog.versions, appcastOptionsFor(settings)));
  execFileSync(process.execPath, [cli, "site", "sync", "--config", config], { stdio: ["ignore", "ignore", "pipe"] });
}
