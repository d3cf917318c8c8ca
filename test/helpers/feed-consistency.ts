import type { ObjectStore } from "../../src/store/object-store.js";

/**
 * What an installed copy could see right now: every version the catalog
 * lists and every appcast enclosure must name objects that exist in full.
 * Returns the problems found (empty when consistent).
 */
export async function feedProblems(store: ObjectStore, pluginId: string): Promise<string[]> {
  const problems: string[] = [];
  const catalogObj = await store.get("releases/catalog.json");
  const appcastObj = await store.get("releases/appcast.xml");
  if (!catalogObj && !appcastObj) return problems;
  if (!catalogObj) return ["appcast exists without a catalog"];
  const catalog = JSON.parse(catalogObj.body.toString("utf8")) as { count: number; versions: Array<{ version: string; sizeBytes: number; autoupdate?: { sizeBytes: number } }> };
  if (catalog.count !== catalog.versions.length) problems.push(`catalog count ${catalog.count} != ${catalog.versions.length}`);
  for (const v of catalog.versions) {
    const dmg = await store.head(`releases/${v.version}/${pluginId}-${v.version}.dmg`);
    const zip = await store.head(`releases/${v.version}/${pluginId}-${v.version}.zip`);
    const rec = await store.head(`releases/${v.version}/release.json`);
    if (!dmg || dmg.size !== v.sizeBytes) problems.push(`catalog names ${v.version} but its dmg is ${dmg ? "the wrong size" : "missing"}`);
    if (!zip || zip.size !== v.autoupdate?.sizeBytes) problems.push(`catalog names ${v.version} but its zip is ${zip ? "the wrong size" : "missing"}`);
    if (!rec) problems.push(`catalog names ${v.version} but its record is missing`);
  }
  if (appcastObj) {
    const xml = appcastObj.body.toString("utf8");
    for (const m of xml.matchAll(/<enclosure url="[^"]*\/downloads\/([^"]+)-(\d[^"]*)\.zip" length="(\d+)"/g)) {
      const version = m[2]!;
      const zip = await store.head(`releases/${version}/${pluginId}-${version}.zip`);
      if (!zip || zip.size !== Number(m[3])) problems.push(`appcast names ${version} but its zip is ${zip ? "the wrong size" : "missing"}`);
    }
  }
  return problems;
}
