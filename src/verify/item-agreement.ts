import type { FeedRecord } from "../domain/appcast-selection.js";
import { rfc822 } from "../domain/timestamps.js";
import { pausedSeconds, rolloutPubDate } from "../domain/rollout-state.js";
import { DEFAULT_CHANNEL } from "../domain/build-order.js";
import type { FeedItem } from "./appcast-reader.js";

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
    ["enclosure url", au.publicDownloadUrl, item.enclosure?.url],
    ["enclosure length", String(au.sizeBytes), item.enclosure?.length],
    ["enclosure sparkle:edSignature", au.edSignature, item.enclosure?.edSignature],
  ];
  const found: string[] = [];
  for (const [what, want, got] of expected) {
    if (want !== got) found.push(`appcast ${what} is ${got === undefined ? "missing" : `"${got}"`} but the catalog says ${want === undefined ? "none" : `"${want}"`}${what === "pubDate" && record.rollout ? ` (the original pubDate plus ${pausedSeconds(record.rollout)} s paused): run \`relcast rebuild\`` : ""}`);
  }
  if (!au.releaseNotesLink && !item.hasDescription) found.push("appcast item has neither inline notes nor a release-notes link");
  found.push(...deltaDisagreements(record, item));
  return found;
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
