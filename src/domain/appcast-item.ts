import type { ReleaseRecord } from "./record-schema.js";
import { recordNotesHtml } from "./notes/notes-html.js";
import { rfc822 } from "./timestamps.js";
import { rolloutPubDate } from "./rollout-state.js";
import { DEFAULT_CHANNEL } from "./build-order.js";
import { escapeHtml } from "../core/html-escape.js";
import { renderNotesHtml } from "./notes/markdown.js";
import { DEFAULT_NOTES_LANGUAGE } from "./notes/notes-language.js";


/** The signature of a release-notes page over its exact bytes, and their count. */
export interface NotesSignature {
  edSignature: string;
  length: number;
}

/** generate_appcast's children: `<sparkle:version>` per exact build, `<sparkle:belowVersion>` per `<build`; none: everyone. */
function informationalElement(entries: readonly string[]): unknown {
  if (entries.length === 0) return "";
  const exact = entries.filter((e) => !e.startsWith("<"));
  const below = entries.filter((e) => e.startsWith("<")).map((e) => e.slice(1));
  return { ...(exact.length > 0 ? { "sparkle:version": exact } : {}), ...(below.length > 0 ? { "sparkle:belowVersion": below } : {}) };
}

/**
 * The item's description: the rendered Markdown notes, or for records from
 * before Markdown notes the summary and the list.
 */
function notesHtml(record: ReleaseRecord): string {
  return record.releaseNotesMarkdown !== undefined
    ? recordNotesHtml(record)
    : `${record.summary ? `<p>${escapeHtml(record.summary)}</p>` : ""}<ul>${record.releaseNotesList.map((n) => `<li>${escapeHtml(n)}</li>`).join("")}</ul>`;
}

/**
 * The inline notes of an item as HTML (what Sparkle shows), one per
 * language, the default first: `lang` is absent when there is only one.
 * Empty when the notes are behind a release-notes link. `verify` holds each
 * `<description>` to these.
 */
export function itemDescriptions(record: ReleaseRecord): Array<{ lang?: string; html: string }> {
  if (record.autoupdate?.releaseNotesLink) return [];
  const localized = record.localizedReleaseNotes ?? [];
  if (localized.length === 0) return [{ html: notesHtml(record) }];
  return [{ lang: DEFAULT_NOTES_LANGUAGE, html: notesHtml(record) }, ...localized.map((l) => ({ lang: l.lang, html: renderNotesHtml(l.markdown) }))];
}

/** "]]>" cannot occur inside CDATA, so it is split. */
function cdataSafe(html: string): string {
  return html.replace(/]]>/g, "]]]]><![CDATA[>");
}

type Au = NonNullable<ReleaseRecord["autoupdate"]>;

/** A notes link, with the signature of the page behind it when the feed is signed and relcast hosts that page. */
function notesLink(url: string, lang: string | undefined, signatures: ReadonlyMap<string, NotesSignature> | undefined): unknown {
  const signature = signatures?.get(url);
  if (!signature && lang === undefined) return url;
  return {
    ...(lang !== undefined ? { "@_xml:lang": lang } : {}),
    // On a signed feed, Sparkle 2.9 verifies the downloaded notes file against these two attributes (SUAppcast.m).
    ...(signature ? { "@_sparkle:edSignature": signature.edSignature, "@_sparkle:length": String(signature.length) } : {}),
    "#text": url,
  };
}

/**
 * The notes: one `sparkle:releaseNotesLink` (Sparkle prefers it) or one
 * inline `description`; with localized notes, one of them per language, each
 * with `xml:lang`. The default notes then say `en` explicitly: Sparkle reads
 * an element without xml:lang among several as "en" but logs an error, and
 * not every Sparkle version does so.
 */
function addNotes(item: Record<string, unknown>, record: ReleaseRecord, au: Au, signatures: ReadonlyMap<string, NotesSignature> | undefined): void {
  const localizedLinks = au.localizedReleaseNotesLinks ?? [];
  if (au.releaseNotesLink) {
    const defaultLang = localizedLinks.length > 0 ? DEFAULT_NOTES_LANGUAGE : undefined;
    const links = [notesLink(au.releaseNotesLink, defaultLang, signatures), ...localizedLinks.map((l) => notesLink(l.url, l.lang, signatures))];
    item["sparkle:releaseNotesLink"] = links.length === 1 ? links[0] : links;
  } else {
    const descriptions = itemDescriptions(record).map((d) => ({ ...(d.lang !== undefined ? { "@_xml:lang": d.lang } : {}), __cdata: cdataSafe(d.html) }));
    item.description = descriptions.length === 1 ? descriptions[0] : descriptions;
  }
}

/**
 * One `<item>` as fast-xml-parser builder input. Element names and the
 * order follow what Sparkle's generate_appcast (FeedXML.swift) writes for a
 * new item; Sparkle's parser (SUAppcast.m) does not depend on the order.
 * Notes are either a `<sparkle:releaseNotesLink>` (which Sparkle prefers
 * when present) or inline HTML in CDATA, never both.
 */
export function appcastItem(record: ReleaseRecord & { autoupdate: Au }, notesSignatures?: ReadonlyMap<string, NotesSignature>): Record<string, unknown> {
  const au = record.autoupdate;
  const item: Record<string, unknown> = {
    title: `Version ${record.version}`,
    // Moved on by the time a phased rollout spent paused (rollout-state.ts); the publication time otherwise.
    pubDate: rfc822(rolloutPubDate(record)),
  };
  if (au.link) item.link = au.link;
  if (au.fullReleaseNotesLink) item["sparkle:fullReleaseNotesLink"] = au.fullReleaseNotesLink;
  if (record.channel && record.channel !== DEFAULT_CHANNEL) item["sparkle:channel"] = record.channel;
  if (au.minimumUpdateVersion) item["sparkle:minimumUpdateVersion"] = au.minimumUpdateVersion;
  if (au.minimumAutoupdateVersion) item["sparkle:minimumAutoupdateVersion"] = au.minimumAutoupdateVersion;
  if (au.ignoreSkippedUpgradesBelowVersion) item["sparkle:ignoreSkippedUpgradesBelowVersion"] = au.ignoreSkippedUpgradesBelowVersion;
  if (au.phasedRolloutInterval) item["sparkle:phasedRolloutInterval"] = String(au.phasedRolloutInterval);
  if (au.criticalUpdate) item["sparkle:criticalUpdate"] = au.criticalUpdate.version ? { "@_sparkle:version": au.criticalUpdate.version } : "";
  if (au.informationalUpdate) item["sparkle:informationalUpdate"] = informationalElement(au.informationalUpdate);
  item["sparkle:version"] = String(au.buildNumber);
  item["sparkle:shortVersionString"] = record.version;
  if (au.minimumSystemVersion) item["sparkle:minimumSystemVersion"] = au.minimumSystemVersion;
  // generate_appcast has no flag for it (it keeps one found in an existing item): next to its minimum.
  if (au.maximumSystemVersion) item["sparkle:maximumSystemVersion"] = au.maximumSystemVersion;
  if (au.hardwareRequirements) item["sparkle:hardwareRequirements"] = au.hardwareRequirements;
  addNotes(item, record, au, notesSignatures);
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
