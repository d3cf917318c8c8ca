/**
 * What a page shows a person deciding what to download: every link target
 * (`href`/`src`/`action` in any quoting a browser accepts, and the URLs of
 * Open Graph tags a link preview fetches) and every SHA-256
 * it prints. Compared between the stored page and the page relcast renders
 * from the records, so a problem names the link or checksum that differs.
 */
export interface PageFacts {
  links: Set<string>;
  checksums: Set<string>;
}

const ATTRIBUTE = /[\s"'/](href|src|srcset|action|formaction|poster|data)\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>"'=<`]+))/gi;
/** A <meta> whose content is a URL a link preview fetches or shows (og:url, og:image, twitter:image, …). */
const META_TAG = /<meta\b[^>]*>/gi;
const URL_PROPERTY = /[\s"'/](?:property|name)\s*=\s*["']?(og:url|og:image(?::url|:secure_url)?|twitter:image)["'\s>/]/i;
const CONTENT = /[\s"'/]content\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>"'=<`]+))/i;
const SHA256 = /(?<![0-9A-Fa-f])[0-9a-f]{64}(?![0-9A-Fa-f])/g;

const decode = (value: string) => value.replace(/&(amp|lt|gt|quot|#39|#x27);/g, (_m, e: string) => ({ amp: "&", lt: "<", gt: ">", quot: '"', "#39": "'", "#x27": "'" })[e]!);

export function pageFacts(html: string): PageFacts {
  const links = new Set<string>();
  for (const m of html.matchAll(ATTRIBUTE)) links.add(decode(m[2] ?? m[3] ?? m[4] ?? "").trim());
  for (const [tag] of html.matchAll(META_TAG)) {
    if (!URL_PROPERTY.test(tag)) continue;
    const c = CONTENT.exec(tag);
    if (c) links.add(decode(c[1] ?? c[2] ?? c[3] ?? "").trim());
  }
  return { links, checksums: new Set(html.match(SHA256) ?? []) };
}

/** The page's differences from the expected one, in words (empty: it shows the same links and checksums). */
export function factDifferences(name: string, got: PageFacts, want: PageFacts): string[] {
  const found: string[] = [];
  for (const link of got.links) if (!want.links.has(link)) found.push(`${name} links ${link}, which the records do not name`);
  for (const link of want.links) if (!got.links.has(link)) found.push(`${name} lacks the link ${link}`);
  for (const sum of got.checksums) if (!want.checksums.has(sum)) found.push(`${name} shows SHA-256 ${sum}, which no record has`);
  for (const sum of want.checksums) if (!got.checksums.has(sum)) found.push(`${name} does not show SHA-256 ${sum}`);
  return found;
}

/** Where two texts first differ: the line, and a little of each around the first different character. */
export function firstDifference(got: string, want: string): string {
  let at = 0;
  while (at < got.length && at < want.length && got[at] === want[at]) at++;
  const line = got.slice(0, at).split("\n").length;
  const around = (s: string) => (at >= s.length ? "(end of file)" : JSON.stringify(`${at > 30 ? "…" : ""}${s.slice(Math.max(0, at - 30), at + 50)}${at + 50 < s.length ? "…" : ""}`));
  return `line ${line}: ${around(got)} where relcast writes ${around(want)}`;
}
