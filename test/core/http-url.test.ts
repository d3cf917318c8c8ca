import { describe, expect, it } from "vitest";
import { httpUrlProblem, isHttpUrl } from "../../src/core/http-url.js";

/**
 * Sparkle reads every feed URL with [NSURL URLWithString:] (after replacing spaces with %20), which up to
 * macOS 13 answers nil for text that is not RFC 3986; Node's URL parser accepts and silently encodes it.
 */
describe("isHttpUrl: only URLs Sparkle's NSURL reads as they are", () => {
  it.each([
    ['https://x.example/a"b', '(U+0022)'],
    ["https://ünï.example", "punycode"],
    ["https://x.example/a{b}", '"{"'],
    ["https://x.example/a\\b", "U+005C"],
    ["https://x.example/a<b>", '"<"'],
    ["https://x.example/%zz", "%25"],
    ["https://x.example/a^b", '"^"'],
    ["https://x.example/a|b", '"|"'],
    ["https://x.example/a`b", '"`"'],
    ["https://x.example/a b", "U+0020"],
    ["https://x.example/\u0007", "U+0007"],
    ["https://x.example/ü", "%C3%BC"],
    ["https://x.example/a[b]", "%5B"],
    ["https://x.example/a#b#c", "%23"],
    ["HTTPS://X.example/", "https://x.example/"],
    ["https://x.example:443/", "https://x.example/"],
    ["https://x.example/a/../b", "https://x.example/b"],
    ["ftp://x.example/", "http"],
    ["https:///path", "write it as https://path/"],
    ["https://user:s3cretpw@u.example.com", "user name or password"],
    ["https://token@u.example.com/feed", "user name or password"],
  ])("refuses %s, naming the problem and the fix", (url, named) => {
    expect(isHttpUrl(url)).toBe(false);
    expect(httpUrlProblem(url)).toContain(named);
  });

  it.each([
    "https://x.example", "https://x.example/", "https://x.example/a/b%20c?x=1&y=2#frag", "http://127.0.0.1:9000/bucket/p",
    "https://[::1]:8080/x", "https://xn--n-iga.example/notes/1.0.0-beta.1.html", "https://x.example/~user/a_b-c.d!$&'()*+,;=:@",
  ])("accepts %s", (url) => {
    expect(httpUrlProblem(url)).toBeUndefined();
    expect(new URL(url).href.replace(/\/$/, "")).toBe(url.replace(/\/$/, ""));
  });
});
