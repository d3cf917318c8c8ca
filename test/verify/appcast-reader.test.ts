import { describe, expect, it } from "vitest";
import { readAppcast } from "../../src/verify/appcast-reader.js";

const NS = "http://www.andymatuschak.org/xml-namespaces/sparkle";
const SIG = Buffer.alloc(64, 7).toString("base64");

function feed(items: string, root = `<rss version="2.0" xmlns:sparkle="${NS}">`, channelHead = "<title>T</title>"): string {
  return `<?xml version="1.0" encoding="utf-8"?>\n${root}<channel>${channelHead}${items}</channel></rss>`;
}

function item(over: Record<string, string> = {}): string {
  const v = { pubDate: "Wed, 09 Jan 2006 19:20:11 +0000", url: "https://x.example/p-1.0.0.zip", sig: SIG, channel: "", extra: "", ...over };
  return `<item><title>Version 1.0.0</title><pubDate>${v.pubDate}</pubDate><sparkle:version>100</sparkle:version>` +
    `<sparkle:shortVersionString>1.0.0</sparkle:shortVersionString>${v.channel}${v.extra}` +
    `<enclosure url="${v.url}" length="10" type="application/octet-stream" sparkle:edSignature="${v.sig}"/></item>`;
}

describe("appcast reader (what Sparkle would reject)", () => {
  it("reads a good feed with no problems, including critical and links", () => {
    const parsed = readAppcast(feed(item({ extra: '<sparkle:criticalUpdate sparkle:version="90"/><sparkle:releaseNotesLink>https://x.example/n?a=1&amp;b=2</sparkle:releaseNotesLink>' })));
    expect(parsed.problems).toEqual([]);
    expect(parsed.items).toHaveLength(1);
    expect(parsed.items[0]).toMatchObject({ version: "100", shortVersion: "1.0.0", critical: "90", releaseNotesLink: "https://x.example/n?a=1&b=2", problems: [] });
    expect(readAppcast(feed(item({ extra: "<sparkle:criticalUpdate/>" }))).items[0]!.critical).toBe("");
  });

  it.each<[string, string, RegExp]>([
    ["malformed XML", feed(item()).replace("</channel>", ""), /not well-formed XML .*Sparkle rejects the whole feed/],
    ["the https namespace URI", feed(item(), `<rss version="2.0" xmlns:sparkle="https://www.andymatuschak.org/xml-namespaces/sparkle">`), /must declare xmlns:sparkle="http:\/\/www\.andymatuschak/],
    ["another prefix", feed(item(), `<rss version="2.0" xmlns:sp="${NS}">`), /must declare xmlns:sparkle=/],
    ["a channel without title", feed(item(), undefined, ""), /the <channel> has no <title>/],
    ["two channels", feed(item()).replace("</channel></rss>", "</channel><channel><title>U</title></channel></rss>"), /2 <channel> elements/],
  ])("flags %s for the whole feed", (_name, xml, message) => {
    expect(readAppcast(xml).problems.join("\n")).toMatch(message);
  });

  it.each<[string, Record<string, string>, RegExp]>([
    ["white space inside the signature", { sig: `${SIG.slice(0, 40)} ${SIG.slice(40)}` }, /could not be decoded/],
    ["a 63-byte signature", { sig: Buffer.alloc(63, 1).toString("base64") }, /decodes to 63 bytes, not 64/],
    ["an ISO pubDate", { pubDate: "2006-01-09T19:20:11Z" }, /pubDate "2006-01-09T19:20:11Z" is not in the form/],
    ["a file:// enclosure", { url: "file:///tmp/p.zip" }, /enclosure url "file:\/\/\/tmp\/p\.zip" is not an absolute http\(s\) URL/],
    ["a channel name with a space", { channel: "<sparkle:channel>be ta</sparkle:channel>" }, /sparkle:channel "be ta" has characters/],
    ["a non-http release-notes link", { extra: "<sparkle:releaseNotesLink>ftp://x/n</sparkle:releaseNotesLink>" }, /releaseNotesLink "ftp:\/\/x\/n" is not an absolute http\(s\) URL/],
  ])("flags an item with %s", (_name, over, message) => {
    const parsed = readAppcast(feed(item(over)));
    expect(parsed.problems).toEqual([]);
    expect(parsed.items[0]!.problems.join("\n")).toMatch(message);
  });

  it("accepts a signature with white space only at the ends, as Sparkle trims it", () => {
    expect(readAppcast(feed(item({ sig: ` ${SIG}\n` }))).items[0]!.problems).toEqual([]);
  });
});

describe("appcast reader: the elements Sparkle 2.9 reads beyond the core", () => {
  it("reads link, the builds, the informational set and the languages of the notes", () => {
    const parsed = readAppcast(feed(item({
      extra: "<link>https://x.example/r</link><sparkle:minimumUpdateVersion>90</sparkle:minimumUpdateVersion>"
        + "<sparkle:ignoreSkippedUpgradesBelowVersion>95</sparkle:ignoreSkippedUpgradesBelowVersion><sparkle:maximumSystemVersion>15.9</sparkle:maximumSystemVersion>"
        + "<sparkle:informationalUpdate><sparkle:version>91</sparkle:version><sparkle:belowVersion>80</sparkle:belowVersion></sparkle:informationalUpdate>"
        + '<sparkle:releaseNotesLink xml:lang="en">https://x.example/n.html</sparkle:releaseNotesLink><sparkle:releaseNotesLink xml:lang="de">https://x.example/de/n.html</sparkle:releaseNotesLink>',
    })));
    expect(parsed.items[0]).toMatchObject({
      link: "https://x.example/r", minimumUpdateVersion: "90", ignoreSkippedUpgradesBelowVersion: "95", maximumSystemVersion: "15.9",
      informationalUpdate: ["91", "<80"], releaseNotesLink: "https://x.example/n.html",
      releaseNotesLinks: [{ lang: "en", url: "https://x.example/n.html" }, { lang: "de", url: "https://x.example/de/n.html" }], problems: [],
    });
    expect(readAppcast(feed(item({ extra: "<link>https://x.example/r</link><sparkle:informationalUpdate/>" }))).items[0]!.informationalUpdate).toEqual([]);
  });

  it("keeps the informational builds untrimmed, as Sparkle's set holds them, and flags white space in them", () => {
    const parsed = readAppcast(feed(item({
      extra: "<link>https://x.example/r</link><sparkle:minimumUpdateVersion> 90 </sparkle:minimumUpdateVersion>"
        + "<sparkle:informationalUpdate>\n  <sparkle:version> 105 </sparkle:version>\n  <sparkle:belowVersion>80\n</sparkle:belowVersion>\n</sparkle:informationalUpdate>",
    }))).items[0]!;
    expect(parsed.informationalUpdate).toEqual([" 105 ", "<80\n"]);
    expect(parsed.minimumUpdateVersion).toBe("90"); // plain elements Sparkle trims
    expect(parsed.problems.join("\n")).toMatch(/sparkle:version " 105 ": Sparkle compares it as written \(untrimmed\), so it names no build/);
    expect(parsed.problems.join("\n")).toMatch(/sparkle:belowVersion "80\\n"/);
  });

  it.each<[string, string, RegExp]>([
    ["an informational update without <link> (Sparkle ignores the element)", "<sparkle:informationalUpdate/>", /sparkle:informationalUpdate but no http\(s\) <link>/],
    ["an informational update whose <link> is not http(s)", "<link>ftp://x.example/r</link><sparkle:informationalUpdate/>", /link "ftp:\/\/x\.example\/r" is not an absolute http\(s\) URL[\s\S]*no http\(s\) <link>/],
    ["two descriptions, one without xml:lang", '<description>a</description><description xml:lang="de">b</description>', /2 <description> elements and one has no xml:lang/],
    ["two notes links for one language", '<sparkle:releaseNotesLink xml:lang="de">https://x.example/a</sparkle:releaseNotesLink><sparkle:releaseNotesLink xml:lang="de">https://x.example/b</sparkle:releaseNotesLink>', /two <sparkle:releaseNotesLink> elements for one language/],
  ])("flags %s", (_name, extra, message) => {
    expect(readAppcast(feed(item({ extra }))).items[0]!.problems.join("\n")).toMatch(message);
  });

  // Sparkle replaces spaces with %20, then NSURL (macOS 13 and earlier) answers nil for any other non-RFC 3986 text.
  it.each<[string, RegExp]>([
    ["https://x.example/a&quot;b.zip", /enclosure url "https:\/\/x\.example\/a"b\.zip" has the character .*U\+0022.*Sparkle rejects the item/],
    ["https://ünï.example/p.zip", /enclosure url .* non-ASCII character .*U\+00FC.*punycode.*Sparkle rejects the item/],
    ["https://x.example/%zz.zip", /enclosure url .* without two hex digits.*Sparkle rejects the item/],
    ["https://x.example/a{b}.zip", /enclosure url .*U\+007B.*Sparkle rejects the item/],
  ])("flags the enclosure url %s that NSURL cannot parse", (url, message) => {
    expect(readAppcast(feed(item({ url }))).items[0]!.problems.join("\n")).toMatch(message);
  });

  it("accepts an enclosure url with a space, which Sparkle encodes itself", () => {
    expect(readAppcast(feed(item({ url: "https://x.example/my plugin.zip" }))).items[0]!.problems).toEqual([]);
  });
});
