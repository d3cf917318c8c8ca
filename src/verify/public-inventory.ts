import { hostedNotesPages } from "../domain/notes/notes-page.js";
import type { ReleaseRecord } from "../domain/record-schema.js";
import { quotedFolder } from "../domain/record-keys.js";
import {
  DOWNLOADS_PREFIX, downloadKey, ICONS_PREFIX, LATEST_PREFIX, latestDownloadName, latestDownloadStateKey, publicApiPrefix, publicAppcastKey, publicCatalogKey, RELEASE_NOTES_PREFIX,
} from "../domain/release-layout.js";
import { downloadCopies } from "../site/site-plan.js";
import type { ObjectStore } from "../store/object-store.js";

/** The public prefixes the site step writes under `{app_url}` (pages at the root are the site's own, checked page by page). */
const PUBLIC_PREFIXES = [DOWNLOADS_PREFIX, RELEASE_NOTES_PREFIX, ICONS_PREFIX, "api/"];

/**
 * The key a record's own link names when it points into the site (`{appUrl}/<key>`): a release-notes or
 * history page the publisher hosts beside relcast's files is theirs, named by the record. Compared as
 * written (the query and fragment dropped), never made into a path.
 */
function linkedKey(url: string | undefined, appUrl: string | undefined): string | undefined {
  if (!url || !appUrl) return undefined;
  const base = `${appUrl.replace(/\/+$/, "")}/`;
  if (!url.startsWith(base)) return undefined;
  const rest = url.slice(base.length).split(/[?#]/, 1)[0]!;
  try {
    return decodeURIComponent(rest);
  } catch {
    return rest;
  }
}

/** Every public key the records explain: their download and icon copies, hosted notes pages, the pages their links name, the stable latest downloads and the public feeds. */
function explainedKeys(pluginId: string, records: readonly ReleaseRecord[], appUrl: string | undefined): Set<string> {
  const keys = new Set<string>([
    publicAppcastKey(pluginId), publicCatalogKey(pluginId), latestDownloadStateKey(pluginId),
    downloadKey(latestDownloadName(pluginId, "dmg")), downloadKey(latestDownloadName(pluginId, "zip")),
  ]);
  for (const record of records) for (const { to } of downloadCopies(record)) keys.add(to);
  for (const page of hostedNotesPages(records)) keys.add(page.key);
  for (const record of records) {
    const au = record.autoupdate;
    const links = [au?.releaseNotesLink, au?.fullReleaseNotesLink, au?.link, ...(au?.localizedReleaseNotesLinks ?? []).map((l) => l.url)];
    for (const url of links) {
      const key = linkedKey(url, appUrl);
      if (key) keys.add(key);
    }
  }
  return keys;
}

/** Whether a key is served under the plugin's own public names (`releases/latest/` included: the public latest copies), where a visitor or an installed copy would take it for the publisher's. */
export function underOwnNames(key: string, pluginId: string): boolean {
  return key.startsWith(LATEST_PREFIX) || key.startsWith(`${DOWNLOADS_PREFIX}${pluginId}-`) || key.startsWith(`${ICONS_PREFIX}${pluginId}-`) || key.startsWith(RELEASE_NOTES_PREFIX) || key.startsWith(publicApiPrefix(pluginId));
}

const shown = (keys: readonly string[]) => keys.slice(0, 4).map((k) => quotedFolder(k)).join(", ") + (keys.length > 4 ? ` and ${keys.length - 4} more` : "");

/**
 * Objects under the site's public prefixes that no release explains. One
 * under the plugin's own names (`downloads/<id>-…`, `icons/<id>-…`,
 * `release-notes/…`, `api/v1/plugins/<id>/…`) is served from the official
 * host as if the publisher had published it: a problem. Anything else there
 * (another plugin's feed, a file of another name) is a warning. A publish
 * copies its downloads before it writes its feeds, so one running now shows
 * its new copies here for a moment; the repair says so.
 */
export async function publicInventory(store: ObjectStore, pluginId: string, records: readonly ReleaseRecord[], appUrl: string | undefined): Promise<{ problems: string[]; warnings: string[] }> {
  const explained = explainedKeys(pluginId, records, appUrl);
  const own: string[] = [];
  const other: string[] = [];
  for (const prefix of PUBLIC_PREFIXES) {
    for await (const meta of store.list(prefix)) {
      if (explained.has(meta.key)) continue;
      (underOwnNames(meta.key, pluginId) ? own : other).push(meta.key);
    }
  }
  const problems = own.length === 0 ? [] : [
    `${own.length} public object(s) under the plugin's own names that no release in the catalog names (${shown(own)}): they are served from the official host as if published; if no publish is running now, delete them (or re-run the publish they belong to)`,
  ];
  const warnings = other.length === 0 ? [] : [
    `${other.length} object(s) under the site's public folders that relcast did not write for ${pluginId} (${shown(other)}): nothing links them; delete them if nothing else uses them`,
  ];
  return { problems, warnings };
}
