import { codePointName } from "./xml-text.js";

/**
 * Every URL relcast writes into a feed (enclosure, release-notes and item
 * links, SUFeedURL) is read by Sparkle with `[NSURL URLWithString:]` after it
 * replaced spaces with %20 (SUAppcastItem). Up to macOS 13 that parser takes
 * RFC 3986 text only and answers nil for anything else, so the update could
 * not be downloaded at all. WHATWG's `new URL` (Node) is far more lenient: it
 * quietly encodes `"`, `{`, non-ASCII and friends. So a URL is accepted only
 * when it is plain RFC 3986 (ASCII, the allowed characters, well-formed
 * percent escapes, brackets only around an IPv6 host) and already in the
 * form `new URL` gives it: what relcast writes is then exactly what every
 * parser reads.
 */

/** RFC 3986: unreserved, gen-delims, sub-delims and "%" (checked for escapes below). */
const URL_CHAR = /[A-Za-z0-9\-._~:/?#[\]@!$&'()*+,;=%]/;

function describe(char: string): string {
  const cp = char.codePointAt(0)!;
  const printable = cp > 0x20 && cp !== 0x7f && !(cp >= 0x80 && cp <= 0x9f);
  return printable ? `"${char}" (${codePointName(cp)})` : codePointName(cp);
}

/** The sentence saying why `value` is no URL Sparkle can use, or undefined when it is a plain absolute http(s) URL. */
export function httpUrlProblem(value: string): string | undefined {
  if (!/^https?:\/\//i.test(value)) return "is not an absolute http(s) URL (it must start with https:// or http://)";
  const authorityEnd = value.slice(value.indexOf("//") + 2).search(/[/?#]/);
  const pathStart = authorityEnd === -1 ? value.length : value.indexOf("//") + 2 + authorityEnd;
  let at = 0;
  for (const char of value) {
    const i = at;
    at += char.length;
    const cp = char.codePointAt(0)!;
    if (cp > 0x7e) {
      const inHost = i < pathStart;
      return `has the non-ASCII character ${describe(char)} at position ${i + 1}, which Sparkle's URL parser (NSURL) rejects: ` +
        (inHost ? "write the host in its punycode form (xn--…)" : "percent-encode it as UTF-8 bytes (e.g. ü is %C3%BC)");
    }
    if (!URL_CHAR.test(char)) {
      return `has the character ${describe(char)} at position ${i + 1}, which Sparkle's URL parser (NSURL) rejects: percent-encode it (e.g. a space is %20, " is %22)`;
    }
  }
  const badEscape = /%(?![0-9A-Fa-f]{2})/.exec(value);
  if (badEscape) return `has "%" at position ${badEscape.index + 1} without two hex digits after it: write a literal % as %25`;
  const bracket = value.slice(pathStart).search(/[[\]]/);
  if (bracket !== -1) return `has "${value[pathStart + bracket]}" outside the host: percent-encode it (%5B, %5D)`;
  if ((value.match(/#/g) ?? []).length > 1) return "has more than one \"#\": percent-encode the later ones as %23";
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return "is not a valid URL (check the host and port)";
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") return "is not an absolute http(s) URL";
  if (url.hostname === "") return "has no host";
  // Every URL checked here is published (appcast, catalog, pages) for anyone to read.
  if (url.username !== "" || url.password !== "") return "has a user name or password before its host (…@): it would be published for anyone to read; remove it and protect the site another way";
  if (url.href !== value && url.href !== `${value}/`) return `is not in its plain form: write it as ${url.href}`;
  return undefined;
}

/** An absolute http(s) URL Sparkle's NSURL reads as it is (see {@link httpUrlProblem}). */
export function isHttpUrl(value: string): boolean {
  return httpUrlProblem(value) === undefined;
}
