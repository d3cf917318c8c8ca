import type { FeedRecord } from "../domain/appcast-selection.js";
import { fromTimestamp, rfc822 } from "../domain/timestamps.js";
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
    ["pubDate", rfc822(fromTimestamp(record.publishedAt)), item.pubDate],
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
    if (want !== got) found.push(`appcast ${what} is ${got === undefined ? "missing" : `"${got}"`} but the catalog says ${want === undefined ? "none" : `"${want}"`}`);
  }
  if (!au.releaseNotesLink && !item.hasDescription) found.push("appcast item has neither inline notes nor a release-notes link");
  return found;
}
