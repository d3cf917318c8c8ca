import { XMLParser } from "fast-xml-parser";
import { hostedNotesPages } from "../domain/notes/notes-page.js";
import type { ReleaseRecord } from "../domain/record-schema.js";
import { APPCAST_KEY, publicAppcastKey } from "../domain/release-layout.js";
import { verifyEd25519Buffered } from "../sparkle/ed25519-stream.js";
import { feedSignatureProblem, splitSignedFeed } from "../sparkle/feed-signature.js";
import type { ObjectStore } from "../store/object-store.js";

export interface FeedSignatureExpectations {
  /** `--public-key`, else the newest release bundle's SUPublicEDKey. */
  publicKey: Buffer | undefined;
  /** Why both appcasts must be signed even if neither is (config `appcast.signedFeed`, a bundle's SURequireSignedFeed). */
  requiredBy: string | undefined;
}

interface NotesLink {
  url: string;
  edSignature: string | undefined;
  length: string | undefined;
}

type Node = Record<string, unknown>;

/** Every `<sparkle:releaseNotesLink>` of every item, with its signature attributes (xml:lang variants included). */
function notesLinks(content: Buffer): NotesLink[] {
  const parser = new XMLParser({
    ignoreAttributes: false, attributeNamePrefix: "@_", parseTagValue: false, parseAttributeValue: false, trimValues: true,
    isArray: (_name, jpath) => ["rss.channel", "rss.channel.item", "rss.channel.item.sparkle:releaseNotesLink"].includes(String(jpath)),
  });
  let doc: Node;
  try {
    doc = parser.parse(content.toString("utf8")) as Node;
  } catch {
    return []; // verify's XML checks report an unreadable feed
  }
  const channels = ((doc.rss as Node | undefined)?.channel as Node[] | undefined) ?? [];
  return channels.flatMap((c) => ((c.item as Node[] | undefined) ?? []).flatMap((item) => ((item["sparkle:releaseNotesLink"] as unknown[] | undefined) ?? []).map((l): NotesLink => {
    if (typeof l !== "object" || l === null) return { url: String(l), edSignature: undefined, length: undefined };
    const n = l as Node;
    const attr = (name: string) => (n[`@_${name}`] === undefined ? undefined : String(n[`@_${name}`]));
    return { url: String(n["#text"] ?? ""), edSignature: attr("sparkle:edSignature"), length: attr("sparkle:length") };
  })));
}

const STRICT_BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** A hosted page's signature and length in one feed, as Sparkle 2.9 checks the downloaded notes on a signed feed. */
async function pageProblem(feedKey: string, link: NotesLink, pageKey: string, page: Buffer, publicKey: Buffer | undefined): Promise<string | undefined> {
  if (link.edSignature === undefined || link.length === undefined) {
    return `${feedKey} links ${pageKey} without sparkle:edSignature and sparkle:length; apps with SURequireSignedFeed refuse those notes`;
  }
  if (link.length.trim() !== String(page.length)) return `${feedKey} says ${pageKey} has sparkle:length ${link.length}, but it is ${page.length} bytes`;
  const sig = STRICT_BASE64.test(link.edSignature.trim()) ? Buffer.from(link.edSignature.trim(), "base64") : undefined;
  if (sig?.length !== 64) return `${feedKey}: the sparkle:edSignature of ${pageKey} is not the base64 of 64 bytes`;
  if (publicKey && !(await verifyEd25519Buffered(publicKey, sig, page))) return `${feedKey}: the sparkle:edSignature of ${pageKey} does not verify over its bytes`;
  return undefined;
}

/**
 * The signatures installed copies check (Sparkle 2.9): both appcasts end with
 * a signature block that verifies (when either is signed, or the config or a
 * bundle demands it), and every release-notes page relcast hosts that a feed
 * links is there and, on a signed feed, matches the link's sparkle:length and
 * sparkle:edSignature byte for byte.
 */
export async function feedSignatureProblems(store: ObjectStore, pluginId: string, records: readonly ReleaseRecord[], expect: FeedSignatureExpectations): Promise<string[]> {
  const feeds = (await Promise.all([APPCAST_KEY, publicAppcastKey(pluginId)].map(async (key) => ({ key, body: (await store.get(key))?.body }))))
    .filter((f): f is { key: string; body: Buffer } => f.body !== undefined);
  const signedOne = feeds.find((f) => splitSignedFeed(f.body).block);
  const reason = expect.requiredBy ?? (signedOne ? `${signedOne.key} is signed` : undefined);
  const problems: string[] = [];
  if (reason && !expect.publicKey) {
    problems.push(`the appcast signatures cannot be checked (${reason}): no public key; pass --public-key <SUPublicEDKey>`);
  }
  const hosted = new Map<string, string>();
  for (const page of hostedNotesPages(records)) hosted.set(page.url, page.key);
  const pages = new Map<string, Promise<Buffer | undefined>>();
  const pageBytes = (key: string) => {
    if (!pages.has(key)) pages.set(key, store.get(key).then((got) => got?.body));
    return pages.get(key)!;
  };
  for (const feed of feeds) {
    if (reason && expect.publicKey) {
      const problem = await feedSignatureProblem(feed.body, expect.publicKey);
      if (problem) problems.push(`${feed.key} is refused by apps that require a signed feed (${reason}): ${problem}`);
    }
    for (const link of notesLinks(splitSignedFeed(feed.body).content)) {
      const pageKey = hosted.get(link.url);
      if (!pageKey) continue;
      const page = await pageBytes(pageKey);
      if (!page) problems.push(`${pageKey} is missing, but ${feed.key} links it; run \`relcast site sync\``);
      else if (reason) {
        const problem = await pageProblem(feed.key, link, pageKey, page, expect.publicKey);
        if (problem) problems.push(problem);
      }
    }
  }
  // What Sparkle's update dialog shows: each hosted page is the page relcast renders from its record, byte for byte,
  // signed feed or not (a signature alone does not cover an unsigned feed's pages).
  for (const expected of hostedNotesPages(records)) {
    const page = await pageBytes(expected.key);
    if (page && !page.equals(expected.bytes)) problems.push(`${expected.key} is not the ${expected.lang ? `${expected.lang} ` : ""}release-notes page of ${expected.version} as its record renders it (${page.length} bytes, ${expected.bytes.length} expected): run \`relcast site sync\``);
  }
  return problems;
}
