import { XMLBuilder } from "fast-xml-parser";
import type { RelcastConfig } from "../config/schema.js";
import type { ReleaseRecord } from "./record-schema.js";
import { appcastItem, type NotesSignature } from "./appcast-item.js";
import { appcastRecords } from "./appcast-selection.js";

/** Sparkle matches this exact URI (http, not https) and the literal `sparkle:` prefix. */
export const SPARKLE_NS = "http://www.andymatuschak.org/xml-namespaces/sparkle";

export interface AppcastOptions {
  title: string;
  link: string;
  description?: string;
  language?: string;
  /** Keep only the N highest versions per channel (the catalog keeps all). */
  maxItemsPerChannel?: number | undefined;
}

/** Records must already be newest first (catalog order). `notesSignatures`: by page URL, for the signed release-notes pages. */
export function renderAppcast(records: readonly ReleaseRecord[], options: AppcastOptions, notesSignatures?: ReadonlyMap<string, NotesSignature>): string {
  const items = appcastRecords(records, options.maxItemsPerChannel).map((r) => appcastItem(r, notesSignatures));
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

/** Sparkle clients read the whole feed on every check: 100 items per channel keeps it small. */
export const DEFAULT_APPCAST_ITEMS = 100;

/** The appcast's per-channel limit: `maxAppcastItems` (default 100; 0 lists every release). */
export function appcastLimit(config: Pick<RelcastConfig, "appcast">): number | undefined {
  const n = config.appcast?.maxAppcastItems ?? DEFAULT_APPCAST_ITEMS;
  return n === 0 ? undefined : n;
}

export function appcastOptionsFor(config: Pick<RelcastConfig, "displayName" | "publisher" | "appUrl" | "appcast">): AppcastOptions {
  return {
    title: `${config.displayName} updates`, link: config.appUrl, description: `Updates of ${config.displayName} by ${config.publisher}`,
    maxItemsPerChannel: appcastLimit(config),
  };
}
