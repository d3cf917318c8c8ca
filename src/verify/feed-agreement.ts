import { appcastRecords, type FeedRecord } from "../domain/appcast-selection.js";
import { isYanked } from "../domain/yank-state.js";
import { isPaused } from "../domain/rollout-state.js";
import type { ReleaseRecord } from "../domain/record-schema.js";
import { deltaFileName, localizedNotesPageUrl, publicDownloadUrl, releaseNotesPageUrl, zipFileName } from "../domain/release-layout.js";
import type { FeedItem, ParsedAppcast } from "./appcast-reader.js";
import { itemDisagreements } from "./item-agreement.js";
import { NOT_RUN, outcome, type CheckResult } from "./release-row.js";

export interface FeedExpectations {
  pluginId: string;
  /** When known (from the config), enclosure URLs must start with it. */
  appUrl?: string | undefined;
  maxItemsPerChannel?: number | undefined;
  /** The config's `appcast.releaseNotes` is "page": every release-notes link must be the page relcast hosts. */
  notesPages?: boolean | undefined;
}

/**
 * Release-notes links relcast hosts are signed on a signed feed; one that
 * points anywhere else is not. So a localized link (relcast only ever makes
 * hosted ones) and, in page mode, the default link must be relcast's own page
 * for that version and language: a record edited to point elsewhere would
 * otherwise be signed into the feed by the next rebuild.
 */
function notesLinkProblems(record: FeedRecord, expect: FeedExpectations): string[] {
  const { appUrl } = expect;
  if (appUrl === undefined) return [];
  const found: string[] = [];
  const link = record.autoupdate.releaseNotesLink;
  const own = releaseNotesPageUrl(appUrl, record.version);
  if (expect.notesPages && link !== undefined && link !== own) {
    found.push(`the release-notes link ${link} is not the page relcast hosts (${own}), though appcast.releaseNotes is "page": it is neither signed nor checked; fix the record or re-publish`);
  }
  for (const l of record.autoupdate.localizedReleaseNotesLinks ?? []) {
    const want = localizedNotesPageUrl(appUrl, record.version, l.lang);
    if (l.url !== want) found.push(`the ${l.lang} release-notes link ${l.url} is not the page relcast hosts (${want}): it is neither signed nor checked; fix the record or re-publish`);
  }
  return found;
}

export interface FeedAgreement {
  /** Per release version: how its appcast item (or its absence) checks out. */
  byVersion: Map<string, CheckResult>;
  /** Items that stand for no catalog release, duplicates, and feed-wide problems. */
  feed: string[];
}

/** A public download URL is `{app_url}/downloads/<file>` (with the config's app URL; without it, at least that path). */
function urlProblems(what: string, url: string, fileName: string, appUrl: string | undefined): string[] {
  if (appUrl) return url === publicDownloadUrl(appUrl, fileName) ? [] : [`${what} ${url} is not ${publicDownloadUrl(appUrl, fileName)}`];
  return url.endsWith(`/downloads/${fileName}`) ? [] : [`${what} ${url} does not name ${fileName}`];
}

/**
 * Catalog and appcast agree: each release the appcast should offer (not
 * yanked, not a paused rollout, has an update archive, within maxAppcastItems) has exactly one
 * item with the record's values, and the appcast offers nothing else.
 */
export function checkFeedAgreement(records: readonly ReleaseRecord[], appcast: ParsedAppcast | undefined, expect: FeedExpectations): FeedAgreement {
  const feed = [...(appcast?.problems ?? [])];
  const items = new Map<string, FeedItem[]>();
  for (const item of appcast?.items ?? []) {
    const key = item.shortVersion ?? `(item without shortVersionString, sparkle:version ${item.version ?? "?"})`;
    items.set(key, [...(items.get(key) ?? []), item]);
  }
  const offered = new Set(appcastRecords(records, expect.maxItemsPerChannel).map((r) => r.version));
  const known = new Set(records.map((r) => r.version));
  for (const [version, list] of items) {
    if (!known.has(version)) feed.push(`the appcast offers ${version}, which the catalog does not list (${list.length} item(s))`);
  }
  const byVersion = new Map<string, CheckResult>();
  for (const record of records) {
    const found = items.get(record.version) ?? [];
    if (!offered.has(record.version)) {
      const why = isYanked(record) ? "it is yanked" : !record.autoupdate ? "it has no update archive"
        : isPaused(record) ? `its rollout is paused (since ${record.rollout!.pauses.at(-1)!.pausedAt}): run \`relcast rebuild\` to take it out, or \`relcast rollout resume ${record.version}\`` : "it is beyond maxAppcastItems for its channel";
      byVersion.set(record.version, found.length > 0 ? outcome([`the appcast offers ${record.version} but ${why}`]) : NOT_RUN);
      continue;
    }
    if (found.length === 0) {
      byVersion.set(record.version, outcome([appcast ? `the appcast has no item for ${record.version}` : "there is no appcast"]));
      continue;
    }
    const problems = found.length > 1 ? [`the appcast has ${found.length} items for ${record.version}`] : [];
    const item = found[0]!;
    problems.push(...item.problems, ...itemDisagreements(record as FeedRecord, item), ...notesLinkProblems(record as FeedRecord, expect));
    const url = item.enclosure?.url ?? "";
    const zipName = zipFileName(expect.pluginId, record.version);
    problems.push(...urlProblems("enclosure url", url, zipName, expect.appUrl));
    for (const [i, d] of ((record as FeedRecord).autoupdate.deltas ?? []).entries()) {
      const got = item.deltas?.[i]?.url;
      if (got !== undefined) problems.push(...urlProblems(`delta from ${d.fromVersion}: url`, got, deltaFileName(expect.pluginId, record.version, d.fromVersion), expect.appUrl));
    }
    byVersion.set(record.version, outcome(problems));
  }
  return { byVersion, feed };
}
