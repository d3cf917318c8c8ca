import { hostedNotesPages } from "../domain/notes/notes-page.js";
import type { ReleaseRecord } from "../domain/record-schema.js";
import { shownNames } from "./name-list.js";
import {
  CHANGELOG_KEY, DOWNLOADS_PREFIX, downloadKey, ICONS_PREFIX, INDEX_KEY, LATEST_PREFIX, latestDownloadName, latestDownloadStateKey, publicApiPrefix, publicAppcastKey, publicCatalogKey,
  RELEASE_NOTES_PREFIX, RELEASES_PREFIX,
} from "../domain/release-layout.js";
import { ARCHIVE_NAME } from "../site/archive-plan.js";
import { downloadCopies } from "../site/site-plan.js";
import type { ObjectStore } from "../store/object-store.js";
import { PROBE_PREFIX } from "../store/probe-prefix.js";

/** The site's pages at the root, checked page by page against what relcast renders (public-feeds.ts). */
function isSitePage(key: string): boolean {
  return key === INDEX_KEY || key === CHANGELOG_KEY || ARCHIVE_NAME.test(key);
}

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

/**
 * Files a publisher keeps at a site's root beside any site generator's pages
 * (crawler rules, the browser's default icon, a host's domain file, the
 * RFC 8615 folder): relcast writes none of them, but they are the site's,
 * not an intrusion, so verify names them as warnings and does not fail.
 */
const SITE_OWNER_FILES = new Set(["robots.txt", "favicon.ico", "CNAME", "humans.txt", "sitemap.xml"]);
const isSiteOwnerFile = (key: string) => SITE_OWNER_FILES.has(key) || key.startsWith(".well-known/");

/** A file named as the folder store names its temp and lock files (`.relcast-tmp-…`, `.relcast-lock-…`): what gc sweeps (every `.relcast-*` file, in any folder). */
const STORE_TEMP_NAME = /(^|\/)\.relcast-[^/]*$/;
/**
 * Exactly as the folder store makes them: a temp file (`.relcast-tmp-<pid>-<12 hex>`) or a lock (`.relcast-lock`,
 * `.relcast-lock-<object name>…`). A killed run leaves these, and re-running it does not remove another run's:
 * warnings naming gc. Any other `.relcast-*` name is no file of relcast's: a problem.
 */
const STORE_OWN_NAME = /(^|\/)\.relcast-(tmp-\d+-[0-9a-f]{12}|lock(-[^/]+)?)$/;


/**
 * Every object of the public site that no release explains: the whole store
 * but `releases/` (the record inventory's), listed once. One under the
 * plugin's own names (`downloads/<id>-…`, `icons/<id>-…`, `release-notes/…`,
 * `api/v1/plugins/<id>/…`) is served from the official host as if the
 * publisher had published it; anything else there (a page beside index.html,
 * a folder relcast never makes, another plugin's feed) is served from the
 * same host just the same: both are problems. The folder store's own temp
 * and lock files on the site (a killed run's; a static host serves them too)
 * are warnings naming gc; other `.relcast-*` names are problems. The usual files of a site's root (robots.txt, favicon.ico, CNAME,
 * `.well-known/`…) are only warnings. A publish copies its downloads before it writes its feeds, so one
 * running now shows its new copies (and temp files) here for a moment; the
 * repairs say so.
 */
export async function publicInventory(store: ObjectStore, pluginId: string, records: readonly ReleaseRecord[], appUrl: string | undefined, listAll = false): Promise<{ problems: string[]; warnings: string[] }> {
  const shown = (keys: readonly string[]) => shownNames(keys, listAll);
  const explained = explainedKeys(pluginId, records, appUrl);
  const own: string[] = [];
  const other: string[] = [];
  const siteFiles: string[] = [];
  const probes: string[] = [];
  for await (const meta of store.list("")) {
    if (meta.key.startsWith(RELEASES_PREFIX) || explained.has(meta.key) || isSitePage(meta.key)) continue;
    (meta.key.startsWith(PROBE_PREFIX) ? probes : underOwnNames(meta.key, pluginId) ? own : isSiteOwnerFile(meta.key) ? siteFiles : other).push(meta.key);
  }
  // Everything the folder store's listing hides, anywhere (`releases/` is served too): its own temp and lock files
  // (gc removes them), and anything else with such a name or in such a folder (which nothing of relcast's makes).
  const hidden: string[] = [];
  const strange: string[] = [];
  const odd: string[] = [];
  for (const meta of (await store.hiddenFiles?.("")) ?? []) (STORE_OWN_NAME.test(meta.key) ? hidden : STORE_TEMP_NAME.test(meta.key) ? odd : strange).push(meta.key);
  const problems: string[] = [];
  if (own.length > 0) {
    problems.push(`${own.length} public object(s) under the plugin's own names that no release in the catalog names (${shown(own)}): they are served from the official host as if published; if no publish is running now, delete them (or re-run the publish they belong to)`);
  }
  if (other.length > 0) {
    problems.push(`${other.length} object(s) on the public site that relcast did not write for ${pluginId} (${shown(other)}): the site's host serves them beside its pages as the publisher's; delete them (relcast gc never removes objects)`);
  }
  if (odd.length > 0) {
    problems.push(`${odd.length} file(s) named like the folder store's temp and lock files but not as it makes them (${shown(odd)}): no run of relcast wrote them, and a static host serving the folder serves them; delete them (\`relcast gc --older-than 0\` removes every \`.relcast-*\` file when nothing is running)`);
  }
  if (strange.length > 0) {
    problems.push(`${strange.length} file(s) in a folder named as the folder store names its temp files (${shown(strange)}): its listing hides them, but a static host serving the folder serves them; relcast makes no such folder, and relcast gc does not remove what is in it: delete it by hand`);
  }
  const warnings = siteFiles.length === 0 ? [] : [`${siteFiles.length} site file(s) relcast does not write (${shown(siteFiles)}): kept as the publisher's own; delete any you did not put there`];
  // A killed run's temp and lock files: relcast's own, partial bytes of objects it publishes anyway (a re-run
  // completes the release but leaves them, since another run may be writing its own). A static host serves them, so
  // they are named, with gc, but a store whose every release verifies is not failed for them.
  if (hidden.length > 0) {
    warnings.push(`${hidden.length} temp or lock file(s) of the folder store on the public site (${shown(hidden)}): an interrupted write left them (if no publish, yank or site sync is running now), and a static host serving the folder serves them; run \`relcast gc\` (it removes those older than a day; \`--older-than 0\` when nothing is running)`);
  }
  // A run's conditional-write proof object, left by a run that was killed: relcast's own, holding nothing of a release.
  if (probes.length > 0) warnings.push(`${probes.length} conditional-write probe object(s) an interrupted run left (${shown(probes)}): relcast gc removes them once they are a day old (\`--older-than 0\` when nothing is running)`);
  return { problems, warnings };
}
