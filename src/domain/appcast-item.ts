import type { ReleaseRecord } from "./record-schema.js";
import { recordNotesHtml } from "./notes/notes-html.js";
import { rfc822 } from "./timestamps.js";
import { rolloutPubDate } from "./rollout-state.js";
import { DEFAULT_CHANNEL } from "./build-order.js";
import { escapeHtml } from "../core/html-escape.js";


/** The signature of a release-notes page over its exact bytes, and their count. */
export interface NotesSignature {
  edSignature: string;
  length: number;
}

/**
 * The item's description: the rendered Markdown notes, or for records from
 * before Markdown notes the summary and the list. "]]>" cannot occur inside
 * CDATA, so it is split.
 */
export function notesHtml(record: ReleaseRecord): string {
  const html = record.releaseNotesMarkdown !== undefined
    ? recordNotesHtml(record)
    : `${record.summary ? `<p>${escapeHtml(record.summary)}</p>` : ""}<ul>${record.releaseNotesList.map((n) => `<li>${escapeHtml(n)}</li>`).join("")}</ul>`;
  return html.replace(/]]>/g, "]]]]><![CDATA[>");
}

/**
 * One `<item>` as fast-xml-parser builder input. Element names and the
 * order follow what Sparkle's generate_appcast (FeedXML.swift) writes for a
 * new item; Sparkle's parser (SUAppcast.m) does not depend on the order.
 * Notes are either a `<sparkle:releaseNotesLink>` (which Sparkle prefers
 * when present) or inline HTML in CDATA, never both.
 */
export function appcastItem(record: ReleaseRecord & { autoupdate: NonNullable<ReleaseRecord["autoupdate"]> }, notesSignature?: NotesSignature): Record<string, unknown> {
  const au = record.autoupdate;
  const item: Record<string, unknown> = {
    title: `Version ${record.version}`,
    // Moved on by the time a phased rollout spent paused (rollout-state.ts); the publication time otherwise.
    pubDate: rfc822(rolloutPubDate(record)),
  };
  if (au.fullReleaseNotesLink) item["sparkle:fullReleaseNotesLink"] = au.fullReleaseNotesLink;
  if (record.channel && record.channel !== DEFAULT_CHANNEL) item["sparkle:channel"] = record.channel;
  if (au.minimumAutoupdateVersion) item["sparkle:minimumAutoupdateVersion"] = au.minimumAutoupdateVersion;
  if (au.phasedRolloutInterval) item["sparkle:phasedRolloutInterval"] = String(au.phasedRolloutInterval);
  if (au.criticalUpdate) item["sparkle:criticalUpdate"] = au.criticalUpdate.version ? { "@_sparkle:version": au.criticalUpdate.version } : "";
  item["sparkle:version"] = String(au.buildNumber);
  item["sparkle:shortVersionString"] = record.version;
  if (au.minimumSystemVersion) item["sparkle:minimumSystemVersion"] = au.minimumSystemVersion;
  if (au.hardwareRequirements) item["sparkle:hardwareRequirements"] = au.hardwareRequirements;
  // On a signed feed, Sparkle 2.9 verifies the downloaded notes file against these two attributes (SUAppcast.m).
  if (au.releaseNotesLink && notesSignature) {
    item["sparkle:releaseNotesLink"] = { "@_sparkle:edSignature": notesSignature.edSignature, "@_sparkle:length": String(notesSignature.length), "#text": au.releaseNotesLink };
  } else if (au.releaseNotesLink) item["sparkle:releaseNotesLink"] = au.releaseNotesLink;
  else item.description = { __cdata: notesHtml(record) };
  item.enclosure = {
    "@_url": au.publicDownloadUrl,
    "@_length": String(au.sizeBytes),
    "@_type": "application/octet-stream",
    "@_sparkle:edSignature": au.edSignature,
  };
  // generate_appcast's form: <sparkle:deltas> after the enclosure, one <enclosure> per delta,
  // attributes url, sparkle:deltaFrom (the old build), length, type, sparkle:edSignature.
  if (au.deltas && au.deltas.length > 0) {
    item["sparkle:deltas"] = {
      enclosure: au.deltas.map((d) => ({
        "@_url": d.url,
        "@_sparkle:deltaFrom": String(d.fromBuild),
        "@_length": String(d.sizeBytes),
        "@_type": "application/octet-stream",
        "@_sparkle:edSignature": d.edSignature,
      })),
    };
  }
  return item;
}
