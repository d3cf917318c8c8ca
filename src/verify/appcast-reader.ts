import { XMLParser, XMLValidator } from "fast-xml-parser";
import { SPARKLE_NS } from "../domain/appcast.js";
import { CHANNEL_PATTERN } from "../config/schema.js";

/** One `<item>` as Sparkle's parser would pick it apart (SUAppcast.m / SUAppcastItem.m). */
export interface FeedItem {
  title?: string;
  pubDate?: string;
  version?: string;
  shortVersion?: string;
  channel?: string;
  minimumSystemVersion?: string;
  hardwareRequirements?: string;
  minimumAutoupdateVersion?: string;
  phasedRolloutInterval?: string;
  /** undefined: not critical; "": critical for everyone; else the build below which it is critical. */
  critical?: string;
  releaseNotesLink?: string;
  fullReleaseNotesLink?: string;
  hasDescription: boolean;
  enclosure?: { url?: string; length?: string; type?: string; edSignature?: string };
  /** Problems Sparkle itself would have with this item. */
  problems: string[];
}

export interface ParsedAppcast {
  items: FeedItem[];
  /** Problems with the feed as a whole (one such problem and Sparkle rejects every item). */
  problems: string[];
}

/** generate_appcast's date form; Sparkle parses `E, dd MMM yyyy HH:mm:ss Z` with the en_US locale. */
const PUB_DATE = /^(Mon|Tue|Wed|Thu|Fri|Sat|Sun), \d{2} (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) \d{4} \d{2}:\d{2}:\d{2} [+-]\d{4}$/;
const STRICT_BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

type Node = Record<string, unknown>;

function text(value: unknown): string | undefined {
  if (typeof value === "string") return value;
  if (typeof value === "number") return String(value);
  if (value && typeof value === "object" && "#text" in value) return text((value as Node)["#text"]);
  if (value && typeof value === "object") return "";
  return undefined;
}

/** Sparkle trims the value, then decodes strict base64 (no inner white space) and needs 64 bytes. */
export function signatureProblem(value: string | undefined): string | undefined {
  if (value === undefined) return "the enclosure has no sparkle:edSignature";
  const trimmed = value.trim();
  if (!STRICT_BASE64.test(trimmed) || trimmed.length % 4 !== 0) return `sparkle:edSignature "${value.slice(0, 20)}…" could not be decoded (not strict base64)`;
  const bytes = Buffer.from(trimmed, "base64").length;
  return bytes === 64 ? undefined : `sparkle:edSignature decodes to ${bytes} bytes, not 64`;
}

function isHttpUrl(value: string | undefined): boolean {
  try {
    return value !== undefined && /^https?:$/.test(new URL(value).protocol);
  } catch {
    return false;
  }
}

function readItem(node: Node): FeedItem {
  const s = (name: string) => text(node[`sparkle:${name}`]);
  const enc = node.enclosure as Node | undefined;
  const critical = node["sparkle:criticalUpdate"];
  const item: FeedItem = {
    title: text(node.title), pubDate: text(node.pubDate), version: s("version"), shortVersion: s("shortVersionString"),
    channel: s("channel"), minimumSystemVersion: s("minimumSystemVersion"), hardwareRequirements: s("hardwareRequirements"), minimumAutoupdateVersion: s("minimumAutoupdateVersion"),
    phasedRolloutInterval: s("phasedRolloutInterval"), releaseNotesLink: s("releaseNotesLink"), fullReleaseNotesLink: s("fullReleaseNotesLink"),
    hasDescription: node.description !== undefined, problems: [],
    ...(critical !== undefined ? { critical: typeof critical === "object" && critical ? String((critical as Node)["@_sparkle:version"] ?? "") : "" } : {}),
    ...(enc ? { enclosure: { url: text(enc["@_url"]), length: text(enc["@_length"]), type: text(enc["@_type"]), edSignature: text(enc["@_sparkle:edSignature"]) } } : {}),
  };
  const p = item.problems;
  if (!item.version) p.push("the item has no <sparkle:version>");
  if (!item.shortVersion) p.push("the item has no <sparkle:shortVersionString>");
  if (!item.pubDate || !PUB_DATE.test(item.pubDate)) p.push(`pubDate "${item.pubDate ?? ""}" is not in the form "Wed, 09 Jan 2006 19:20:11 +0000"`);
  if (item.channel !== undefined && !CHANNEL_PATTERN.test(item.channel)) p.push(`sparkle:channel "${item.channel}" has characters Sparkle ignores the channel for`);
  if (item.phasedRolloutInterval !== undefined && !/^\d+$/.test(item.phasedRolloutInterval)) p.push(`sparkle:phasedRolloutInterval "${item.phasedRolloutInterval}" is not whole seconds`);
  for (const [name, url] of [["releaseNotesLink", item.releaseNotesLink], ["fullReleaseNotesLink", item.fullReleaseNotesLink]] as const) {
    if (url !== undefined && !isHttpUrl(url)) p.push(`sparkle:${name} "${url}" is not http(s); Sparkle ignores it`);
  }
  if (!item.enclosure) p.push("the item has no <enclosure>");
  else {
    if (!isHttpUrl(item.enclosure.url)) p.push(`enclosure url "${item.enclosure.url ?? ""}" is not http(s); Sparkle rejects the item`);
    if (!item.enclosure.length || !/^\d+$/.test(item.enclosure.length)) p.push(`enclosure length "${item.enclosure.length ?? ""}" is not a byte count`);
    if (item.enclosure.type !== "application/octet-stream") p.push(`enclosure type is "${item.enclosure.type ?? ""}", not application/octet-stream`);
    const sig = signatureProblem(item.enclosure.edSignature);
    if (sig) p.push(sig);
  }
  return item;
}

/**
 * Reads an appcast the way Sparkle 2 does: well-formed XML, `<rss>` with the
 * exact Sparkle namespace URI under the literal `sparkle:` prefix, one
 * `<channel>` with a `<title>`, and the items inside it.
 */
export function readAppcast(xml: string): ParsedAppcast {
  const valid = XMLValidator.validate(xml);
  if (valid !== true) return { items: [], problems: [`appcast is not well-formed XML (line ${valid.err.line}: ${valid.err.msg}); Sparkle rejects the whole feed`] };
  const parser = new XMLParser({
    ignoreAttributes: false, attributeNamePrefix: "@_", parseTagValue: false, parseAttributeValue: false, trimValues: true,
    processEntities: true, isArray: (_name, jpath) => jpath === "rss.channel" || jpath === "rss.channel.item",
  });
  const doc = parser.parse(xml) as Node;
  const rss = doc.rss as Node | undefined;
  if (!rss) return { items: [], problems: ["appcast has no <rss> root element"] };
  const problems: string[] = [];
  if (rss["@_version"] !== "2.0") problems.push(`<rss version="${String(rss["@_version"] ?? "")}">: expected 2.0`);
  if (rss["@_xmlns:sparkle"] !== SPARKLE_NS) problems.push(`<rss> must declare xmlns:sparkle="${SPARKLE_NS}" (found "${String(rss["@_xmlns:sparkle"] ?? "")}")`);
  const channels = (rss.channel as Node[] | undefined) ?? [];
  if (channels.length !== 1) problems.push(`appcast has ${channels.length} <channel> elements; Sparkle reads one`);
  const channel = channels[0] ?? {};
  if (!text(channel.title)) problems.push("the <channel> has no <title>");
  const items = ((channel.item as Node[] | undefined) ?? []).map((n) => readItem(typeof n === "object" && n ? n : {}));
  return { items, problems };
}
