import { XMLBuilder } from "fast-xml-parser";
import type { ReleaseRecord } from "../release/record-schema.js";
import { fromTimestamp, rfc822 } from "../release/timestamps.js";

export const SPARKLE_NS = "http://www.andymatuschak.org/xml-namespaces/sparkle";
export const DEFAULT_CHANNEL = "stable";

export interface AppcastOptions {
  title: string;
  link: string;
  description?: string;
  language?: string;
  /** Keep only the newest N items per channel (the catalog keeps all). */
  maxItemsPerChannel?: number;
}

function escapeHtml(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
}

/** Notes as an HTML list; "]]>" cannot occur inside CDATA, so it is split. */
export function notesHtml(record: ReleaseRecord): string {
  const items = record.releaseNotesList.map((n) => `<li>${escapeHtml(n)}</li>`).join("");
  const summary = record.summary ? `<p>${escapeHtml(record.summary)}</p>` : "";
  return `${summary}<ul>${items}</ul>`.replace(/]]>/g, "]]]]><![CDATA[>");
}

function itemFor(record: ReleaseRecord): Record<string, unknown> | undefined {
  const au = record.autoupdate;
  if (!au) return undefined;
  const item: Record<string, unknown> = {
    title: `Version ${record.version}`,
    pubDate: rfc822(fromTimestamp(record.publishedAt)),
    "sparkle:version": String(au.buildNumber),
    "sparkle:shortVersionString": record.version,
  };
  if (record.channel && record.channel !== DEFAULT_CHANNEL) item["sparkle:channel"] = record.channel;
  if (au.minimumSystemVersion) item["sparkle:minimumSystemVersion"] = au.minimumSystemVersion;
  item.description = { __cdata: notesHtml(record) };
  item.enclosure = {
    "@_url": au.publicDownloadUrl,
    "@_length": String(au.sizeBytes),
    "@_type": "application/octet-stream",
    "@_sparkle:edSignature": au.edSignature,
  };
  return item;
}

/** Records must already be newest first (catalog order). */
export function renderAppcast(records: readonly ReleaseRecord[], options: AppcastOptions): string {
  const perChannel = new Map<string, number>();
  const items: Record<string, unknown>[] = [];
  for (const record of records) {
    const item = itemFor(record);
    if (!item) continue;
    const channel = record.channel || DEFAULT_CHANNEL;
    const seen = perChannel.get(channel) ?? 0;
    if (options.maxItemsPerChannel !== undefined && seen >= options.maxItemsPerChannel) continue;
    perChannel.set(channel, seen + 1);
    items.push(item);
  }
  const channel: Record<string, unknown> = { title: options.title, link: options.link };
  if (options.description) channel.description = options.description;
  channel.language = options.language ?? "en";
  channel.item = items;
  const builder = new XMLBuilder({
    ignoreAttributes: false,
    attributeNamePrefix: "@_",
    cdataPropName: "__cdata",
    format: true,
    indentBy: "  ",
    suppressEmptyNode: true,
  });
  const body = builder.build({
    rss: { "@_version": "2.0", "@_xmlns:sparkle": SPARKLE_NS, channel },
  }) as string;
  return `<?xml version="1.0" encoding="utf-8"?>\n${body}`;
}
