import { parseCatalog } from "../domain/catalog.js";
import { expectedLatest } from "../domain/latest-choice.js";
import type { ReleaseRecord } from "../domain/record-schema.js";
import {
  APPCAST_KEY, CATALOG_KEY, downloadKey, INDEX_KEY, latestDownloadName, latestDownloadStateKey, publicAppcastKey, publicCatalogKey, zipFileName,
} from "../domain/release-layout.js";
import type { ObjectStore } from "../store/object-store.js";

export interface SiteFindings {
  problems: string[];
  /** What an interrupted publish leaves (public copies behind the canonical feeds); a re-run or `relcast site sync` clears it. */
  warnings: string[];
}

const REPAIR = "re-run the interrupted publish or `relcast site sync`";

/** Every download a public catalog names must be there, the size the record says. */
async function missingDownloads(store: ObjectStore, records: readonly ReleaseRecord[]): Promise<string[]> {
  const found: string[] = [];
  for (const r of records) {
    const wanted: Array<[string, number]> = [[r.objectStore.artifactFileName, r.sizeBytes]];
    if (r.autoupdate) wanted.push([zipFileName(r.pluginId, r.version), r.autoupdate.sizeBytes]);
    for (const [name, size] of wanted) {
      const head = await store.head(downloadKey(name));
      if (!head) found.push(`${downloadKey(name)} is missing, but the public catalog lists ${r.version}`);
      else if (head.size !== size) found.push(`${downloadKey(name)} is ${head.size} bytes; the record of ${r.version} says ${size}`);
    }
  }
  return found;
}

/**
 * The public site (docs/site.md): the public feeds are the canonical ones
 * (or an older state of them, after an interrupted publish), and every file
 * they name, and the stable latest downloads, is there.
 */
export async function checkSite(store: ObjectStore, pluginId: string, records: readonly ReleaseRecord[]): Promise<SiteFindings> {
  const found: SiteFindings = { problems: [], warnings: [] };
  const [publicCatalog, publicAppcast, index] = await Promise.all([store.get(publicCatalogKey(pluginId)), store.get(publicAppcastKey(pluginId)), store.head(INDEX_KEY)]);
  if (!publicCatalog && !publicAppcast && !index) {
    if (records.length > 0) found.warnings.push(`the store has no public site (written by relcast before 0.2); run \`relcast site sync\``);
    return found;
  }
  for (const [key, object, canonicalKey] of [[publicCatalogKey(pluginId), publicCatalog, CATALOG_KEY], [publicAppcastKey(pluginId), publicAppcast, APPCAST_KEY]] as const) {
    if (!object) {
      found.problems.push(`${key} is missing; ${REPAIR}`);
      continue;
    }
    const canonical = await store.get(canonicalKey);
    if (canonical && !canonical.body.equals(object.body)) found.warnings.push(`${key} differs from ${canonicalKey}: ${REPAIR}`);
  }
  let listed = records;
  if (publicCatalog) {
    try {
      listed = parseCatalog(publicCatalog.body.toString("utf8"), store.uriFor(publicCatalogKey(pluginId))).versions;
    } catch (err) {
      found.problems.push((err as Error).message);
    }
  }
  found.problems.push(...(await missingDownloads(store, listed)));
  const want = expectedLatest(records);
  if (want) {
    const state = await store.get(latestDownloadStateKey(pluginId));
    let holds: string | undefined;
    try {
      holds = state ? (JSON.parse(state.body.toString("utf8")) as { version?: string }).version : undefined;
    } catch {
      holds = undefined;
    }
    if (!(await store.head(downloadKey(latestDownloadName(pluginId, "dmg"))))) found.problems.push(`${downloadKey(latestDownloadName(pluginId, "dmg"))} is missing; ${REPAIR}`);
    else if (holds !== want.version) found.warnings.push(`the stable latest downloads hold ${holds ?? "an unknown version"}, not ${want.version}: ${REPAIR}`);
  }
  return found;
}
