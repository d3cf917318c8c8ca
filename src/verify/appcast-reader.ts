import { XMLParser, XMLValidator } from "fast-xml-parser";
import { SPARKLE_NS } from "../domain/appcast.js";
import { CHANNEL_PATTERN } from "../config/schema.js";
import { httpUrlProblem } from "../core/http-url.js";

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
  /** The default release-notes link (no xml:lang, or "en" when there are several). */
  releaseNotesLink?: string;
  fullReleaseNotesLink?: string;
  hasDescription: boolean;
  /** The item's `<link>`. */
  link?: string;
  minimumUpdateVersion?: string;
  ignoreSkippedUpgradesBelowVersion?: string;
  maximumSystemVersion?: string;
  /** generate_appcast's syntax in feed order: "110" per `<sparkle:version>`, "<110" per `<sparkle:belowVersion>`; [] = everyone; undefined: none. */
  informationalUpdate?: string[];
  /** The `xml:lang` of every `<description>`, in feed order (undefined: no attribute). */
  descriptionLanguages: Array<string | undefined>;
  /** Every `<description>`'s text (CDATA joined, ends trimmed), in feed order. */
  descriptionTexts: string[];
  /** Every `<sparkle:releaseNotesLink>` with its xml:lang, in feed order. */
  releaseNotesLinks: Array<{ lang?: string | undefined; url: string }>;
  enclosure?: { url?: string; length?: string; type?: string; edSignature?: string };
  /** The `<sparkle:deltas>` enclosures, in feed order (undefined: the item has none). */
  deltas?: Array<{ url?: string; deltaFrom?: string; length?: string; type?: string; edSignature?: string }>;
  /** Problems Sparkle itself would have with this item. */
  problems: string[];
}

/** The `<channel>`'s own elements (what `renderAppcast` writes from the config). */
export interface FeedChannel {
  title?: string;
  link?: string;
  description?: string;
  language?: string;
}

export interface ParsedAppcast {
  items: FeedItem[];
  channel?: FeedChannel;
  /** Problems with the feed as a whole (one such problem and Sparkle rejects every item). */
  problems: string[];
}

/** generate_appcast's date form; Sparkle parses `E, dd MMM yyyy HH:mm:ss Z` with the en_US locale. */
const PUB_DATE = /^(Mon|Tue|Wed|Thu|Fri|Sat|Sun), \d{2} (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) \d{4} \d{2}:\d{2}:\d{2} [+-]\d{4}$/;
const STRICT_BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

type Node = Record<string, unknown>;

/** Elements that may repeat: always read as lists, so one and several look alike. */
const ARRAYS = new Set([
  "rss.channel", "rss.channel.item", "rss.channel.item.sparkle:deltas.enclosure", "rss.channel.item.description", "rss.channel.item.sparkle:releaseNotesLink",
  "rss.channel.item.sparkle:informationalUpdate.sparkle:version", "rss.channel.item.sparkle:informationalUpdate.sparkle:belowVersion",
]);

/**
 * An element's text as it stands in the feed. The parser keeps white space
 * (trimValues off) because Sparkle does not trim everywhere: the versions of
 * `<sparkle:informationalUpdate>` go into a set as written (SUAppcast.m), so
 * " 105 " there is not build 105.
 */
function rawText(value: unknown): string | undefined {
  if (typeof value === "string") return value;
  if (typeof value === "number") return String(value);
  if (value && typeof value === "object" && "#text" in value) return rawText((value as Node)["#text"]);
  if (value && typeof value === "object") return "";
  return undefined;
}

/** An element's text with its ends trimmed: what Sparkle reads for the item's plain elements (SUAppcast.m trims them). */
function text(value: unknown): string | undefined {
  return rawText(value)?.trim();
}

/** Sparkle trims the value, then decodes strict base64 (no inner white space) and needs 64 bytes. */
export function signatureProblem(value: string | undefined): string | undefined {
  if (value === undefined) return "the enclosure has no sparkle:edSignature";
  const trimmed = value.trim();
  if (!STRICT_BASE64.test(trimmed) || trimmed.length % 4 !== 0) return `sparkle:edSignature "${value.slice(0, 20)}…" could not be decoded (not strict base64)`;
  const bytes = Buffer.from(trimmed, "base64").length;
  return bytes === 64 ? undefined : `sparkle:edSignature decodes to ${bytes} bytes, not 64`;
}

/**
 * Why Sparkle cannot use a URL of the feed: it replaces spaces with %20 and
 * hands the rest to NSURL, which (macOS 13 and earlier) answers nil for text
 * that is not RFC 3986 (see core/http-url.ts).
 */
function urlProblem(value: string): string | undefined {
  return httpUrlProblem(value.replaceAll(" ", "%20"));
}

function isHttpUrl(value: string | undefined): boolean {
  return value !== undefined && urlProblem(value) === undefined;
}

function attribute(value: unknown, name: string): string | undefined {
  return value && typeof value === "object" && (value as Node)[`@_${name}`] !== undefined ? String((value as Node)[`@_${name}`]) : undefined;
}

function informational(value: unknown): string[] | undefined {
  if (value === undefined) return undefined;
  if (!value || typeof value !== "object") return [];
  const n = value as Node;
  const list = (name: string) => ((n[name] as unknown[] | undefined) ?? []).map((v) => rawText(v) ?? "");
  return [...list("sparkle:version"), ...list("sparkle:belowVersion").map((v) => `<${v}`)];
}

/** Several elements of one name are told apart by xml:lang; Sparkle reads a missing one as "en" (SUAppcast.m bestNodeInNodes). */
function languageProblems(name: string, languages: Array<string | undefined>): string[] {
  if (languages.length < 2) return [];
  const found: string[] = [];
  if (languages.some((l) => !l)) found.push(`the item has ${languages.length} <${name}> elements and one has no xml:lang; Sparkle reads it as "en" and logs an error`);
  const named = languages.map((l) => l || "en");
  if (new Set(named).size !== named.length) found.push(`the item has two <${name}> elements for one language (${named.join(", ")})`);
  return found;
}

function readItem(node: Node): FeedItem {
  const s = (name: string) => text(node[`sparkle:${name}`]);
  const links = ((node["sparkle:releaseNotesLink"] as unknown[] | undefined) ?? []).map((l) => ({ lang: attribute(l, "xml:lang"), url: text(l) ?? "" }));
  const descriptions = (node.description as unknown[] | undefined) ?? [];
  const defaultLink = links.length === 1 ? links[0] : links.find((l) => (l.lang ?? "en") === "en");
  const enc = node.enclosure as Node | undefined;
  const critical = node["sparkle:criticalUpdate"];
  const deltas = node["sparkle:deltas"];
  const deltaNodes = deltas && typeof deltas === "object" ? (((deltas as Node).enclosure as Node[] | undefined) ?? []) : undefined;
  const item: FeedItem = {
    title: text(node.title), pubDate: text(node.pubDate), version: s("version"), shortVersion: s("shortVersionString"),
    channel: s("channel"), minimumSystemVersion: s("minimumSystemVersion"), hardwareRequirements: s("hardwareRequirements"), minimumAutoupdateVersion: s("minimumAutoupdateVersion"),
    phasedRolloutInterval: s("phasedRolloutInterval"), releaseNotesLink: defaultLink?.url, fullReleaseNotesLink: s("fullReleaseNotesLink"),
    hasDescription: descriptions.length > 0, problems: [],
    link: text(node.link), minimumUpdateVersion: s("minimumUpdateVersion"), ignoreSkippedUpgradesBelowVersion: s("ignoreSkippedUpgradesBelowVersion"),
    maximumSystemVersion: s("maximumSystemVersion"), descriptionLanguages: descriptions.map((d) => attribute(d, "xml:lang")), descriptionTexts: descriptions.map((d) => (text(d) ?? "").trim()), releaseNotesLinks: links,
    ...(node["sparkle:informationalUpdate"] !== undefined ? { informationalUpdate: informational(node["sparkle:informationalUpdate"]) } : {}),
    ...(critical !== undefined ? { critical: typeof critical === "object" && critical ? String((critical as Node)["@_sparkle:version"] ?? "") : "" } : {}),
    ...(enc ? { enclosure: { url: text(enc["@_url"]), length: text(enc["@_length"]), type: text(enc["@_type"]), edSignature: text(enc["@_sparkle:edSignature"]) } } : {}),
    ...(deltas !== undefined ? {
      deltas: (deltaNodes ?? []).map((d) => ({
        url: text(d["@_url"]), deltaFrom: text(d["@_sparkle:deltaFrom"]), length: text(d["@_length"]), type: text(d["@_type"]), edSignature: text(d["@_sparkle:edSignature"]),
      })),
    } : {}),
  };
  const p = item.problems;
  if (!item.version) p.push("the item has no <sparkle:version>");
  if (!item.shortVersion) p.push("the item has no <sparkle:shortVersionString>");
  if (!item.pubDate || !PUB_DATE.test(item.pubDate)) p.push(`pubDate "${item.pubDate ?? ""}" is not in the form "Wed, 09 Jan 2006 19:20:11 +0000"`);
  if (item.channel !== undefined && !CHANNEL_PATTERN.test(item.channel)) p.push(`sparkle:channel "${item.channel}" has characters Sparkle ignores the channel for`);
  if (item.phasedRolloutInterval !== undefined && !/^\d+$/.test(item.phasedRolloutInterval)) p.push(`sparkle:phasedRolloutInterval "${item.phasedRolloutInterval}" is not whole seconds`);
  for (const [name, url] of [...links.map((l) => ["releaseNotesLink", l.url] as const), ["fullReleaseNotesLink", item.fullReleaseNotesLink] as const, ["link", item.link] as const]) {
    const problem = url !== undefined ? urlProblem(url) : undefined;
    if (problem) p.push(`${name === "link" ? "" : "sparkle:"}${name} "${url}" ${problem}; Sparkle ignores it`);
  }
  // SUAppcastItem.m: informational versions are read only when the item has an http(s) <link> (its "Learn More…" page).
  if (item.informationalUpdate !== undefined && !isHttpUrl(item.link)) p.push("the item has sparkle:informationalUpdate but no http(s) <link>: Sparkle ignores it and offers the update to install");
  for (const entry of item.informationalUpdate ?? []) {
    const build = entry.replace(/^</, "");
    if (build !== build.trim() || build === "") {
      p.push(`sparkle:informationalUpdate has ${entry.startsWith("<") ? "sparkle:belowVersion" : "sparkle:version"} ${JSON.stringify(build)}: Sparkle compares it as written (untrimmed), so it names no build`);
    }
  }
  p.push(...languageProblems("description", item.descriptionLanguages), ...languageProblems("sparkle:releaseNotesLink", links.map((l) => l.lang)));
  if (!item.enclosure) p.push("the item has no <enclosure>");
  else {
    const problem = item.enclosure.url === undefined ? "is missing" : urlProblem(item.enclosure.url);
    if (problem) p.push(`enclosure url "${item.enclosure.url ?? ""}" ${problem}; Sparkle rejects the item`);
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
    ignoreAttributes: false, attributeNamePrefix: "@_", parseTagValue: false, parseAttributeValue: false, trimValues: false,
    processEntities: true, isArray: (_name, jpath) => ARRAYS.has(String(jpath)),
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
  const own: FeedChannel = { title: text(channel.title), link: text(channel.link), description: text(channel.description), language: text(channel.language) };
  return { items, channel: own, problems };
}
