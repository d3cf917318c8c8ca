import type { FeedRecord } from "../domain/appcast-selection.js";
import { rfc822 } from "../domain/timestamps.js";
import { pausedSeconds, rolloutPubDate } from "../domain/rollout-state.js";
import { DEFAULT_CHANNEL } from "../domain/build-order.js";
import type { FeedItem } from "./appcast-reader.js";
import { DEFAULT_NOTES_LANGUAGE } from "../domain/notes/notes-language.js";
import { itemDescriptions } from "../domain/appcast-item.js";

/**
 * Where an appcast item disagrees with the catalog record it stands for:
 * every value Sparkle acts on must be the record's (the appcast is derived
 * from the catalog, so any difference is damage or a stale feed).
 */
export function itemDisagreements(record: FeedRecord, item: FeedItem): string[] {
  const au = record.autoupdate;
  const channel = record.channel === DEFAULT_CHANNEL ? undefined : record.channel;
  const expected: Array<[string, string | undefined, string | undefined]> = [
    ["sparkle:version", String(au.buildNumber), item.version],
    // The publication time moved on by every pause of a phased rollout (the groups' clock).
    ["pubDate", rfc822(rolloutPubDate(record)), item.pubDate],
    ["sparkle:channel", channel, item.channel],
    ["sparkle:minimumSystemVersion", au.minimumSystemVersion, item.minimumSystemVersion],
    ["sparkle:hardwareRequirements", au.hardwareRequirements, item.hardwareRequirements],
    ["sparkle:minimumAutoupdateVersion", au.minimumAutoupdateVersion, item.minimumAutoupdateVersion],
    ["sparkle:phasedRolloutInterval", au.phasedRolloutInterval?.toString(), item.phasedRolloutInterval],
    ["sparkle:criticalUpdate", au.criticalUpdate ? au.criticalUpdate.version ?? "" : undefined, item.critical],
    ["sparkle:releaseNotesLink", au.releaseNotesLink, item.releaseNotesLink],
    ["sparkle:fullReleaseNotesLink", au.fullReleaseNotesLink, item.fullReleaseNotesLink],
    ["link", au.link, item.link],
    ["sparkle:minimumUpdateVersion", au.minimumUpdateVersion, item.minimumUpdateVersion],
    ["sparkle:ignoreSkippedUpgradesBelowVersion", au.ignoreSkippedUpgradesBelowVersion, item.ignoreSkippedUpgradesBelowVersion],
    ["sparkle:maximumSystemVersion", au.maximumSystemVersion, item.maximumSystemVersion],
    ["sparkle:informationalUpdate", informationalText(au.informationalUpdate), informationalText(item.informationalUpdate)],
    ["localized sparkle:releaseNotesLink", localizedLinksText(au.localizedReleaseNotesLinks ?? []), localizedLinksText(item.releaseNotesLinks.filter((l) => l.url !== item.releaseNotesLink))],
    ["<description> languages", descriptionLanguages(record), item.hasDescription ? item.descriptionLanguages.map((l) => l ?? "(none)").join(", ") : undefined],
    ["enclosure url", au.publicDownloadUrl, item.enclosure?.url],
    ["enclosure length", String(au.sizeBytes), item.enclosure?.length],
    ["enclosure sparkle:edSignature", au.edSignature, item.enclosure?.edSignature],
  ];
  const found: string[] = [];
  for (const [what, want, got] of expected) {
    if (want !== got) found.push(`appcast ${what} is ${got === undefined ? "missing" : `"${got}"`} but the catalog says ${want === undefined ? "none" : `"${want}"`}${what === "pubDate" && record.rollout ? ` (the original pubDate plus ${pausedSeconds(record.rollout)} s paused): run \`relcast rebuild\`` : ""}`);
  }
  if (!au.releaseNotesLink && !item.hasDescription) found.push("appcast item has neither inline notes nor a release-notes link");
  found.push(...descriptionDisagreements(record, item));
  found.push(...deltaDisagreements(record, item));
  return found;
}

/** A set to Sparkle: compared without order ("" for the empty element: everyone). */
function informationalText(entries: readonly string[] | undefined): string | undefined {
  return entries === undefined ? undefined : [...entries].sort().join(",");
}

function localizedLinksText(links: ReadonlyArray<{ lang?: string | undefined; url: string }>): string | undefined {
  return links.length === 0 ? undefined : links.map((l) => `${l.lang ?? "(no xml:lang)"}=${l.url}`).sort().join(" ");
}

/** Each inline description is the record's notes in its language, as relcast renders them (what Sparkle shows). */
function descriptionDisagreements(record: FeedRecord, item: FeedItem): string[] {
  const want = itemDescriptions(record);
  if (want.length !== item.descriptionTexts.length) return []; // the languages line says what is missing
  return want.flatMap((d, i) => (item.descriptionTexts[i] === d.html.trim()
    ? []
    : [`appcast <description${d.lang ? ` xml:lang="${d.lang}"` : ""}> is not the record's ${d.lang ? `${d.lang} ` : ""}notes as relcast renders them`]));
}

/** The languages of the inline notes the record asks for: none (one description without xml:lang), or "en" plus each localized one. */
function descriptionLanguages(record: FeedRecord): string | undefined {
  if (record.autoupdate.releaseNotesLink) return undefined;
  const localized = record.localizedReleaseNotes ?? [];
  return localized.length === 0 ? "(none)" : [DEFAULT_NOTES_LANGUAGE, ...localized.map((l) => l.lang)].join(", ");
}

/** The item's `<sparkle:deltas>` are the record's deltas, one enclosure each, in the record's order, with its values. */
function deltaDisagreements(record: FeedRecord, item: FeedItem): string[] {
  const want = record.autoupdate.deltas ?? [];
  const got = item.deltas ?? [];
  if (want.length === 0 && item.deltas === undefined) return [];
  const found: string[] = [];
  if (want.length === 0) found.push(`appcast has <sparkle:deltas> (${got.length} enclosure(s)) but the catalog names no delta update`);
  else if (got.length !== want.length) found.push(`appcast has ${got.length} delta enclosure(s) but the catalog names ${want.length}`);
  for (const [i, d] of want.entries()) {
    const enc = got[i];
    if (!enc) continue;
    const expected: Array<[string, string, string | undefined]> = [
      ["sparkle:deltaFrom", String(d.fromBuild), enc.deltaFrom],
      ["url", d.url, enc.url],
      ["length", String(d.sizeBytes), enc.length],
      ["type", "application/octet-stream", enc.type],
      ["sparkle:edSignature", d.edSignature, enc.edSignature],
    ];
    for (const [what, w, g] of expected) {
      if (w !== g) found.push(`appcast delta from ${d.fromVersion}: ${what} is ${g === undefined ? "missing" : `"${g}"`} but the catalog says "${w}"`);
    }
  }
  return found;
}
