import { describe, expect, it } from "vitest";
import { parseRange } from "../../../src/site/serve/byte-range.js";
import { notModified, rangeStillValid } from "../../../src/site/serve/conditional.js";
import { keyForRequestTarget } from "../../../src/site/serve/request-key.js";

describe("request target → store key", () => {
  it.each([
    ["/", "index.html"], ["/index.html", "index.html"], ["/downloads/", "downloads/index.html"],
    ["/api/v1/plugins/bridge-plugin/appcast.xml?x=1", "api/v1/plugins/bridge-plugin/appcast.xml"],
    ["/downloads/My%20Plugin-1.0.0.dmg", "downloads/My Plugin-1.0.0.dmg"],
  ])("%s → %s", (target, key) => {
    expect(keyForRequestTarget(target)).toEqual({ ok: true, key });
  });

  it.each([
    ["/../x", 400], ["/a/%2e%2e/x", 400], ["/a%2fb", 400], ["/a%5cb", 400], ["/a\\b", 400], ["//x", 400], ["/a//b", 400],
    ["/x%00", 400], ["/%ff%fe", 400], ["http://h/x", 400], ["*", 400], ["/.relcast-lock-x", 404], ["/a/.hidden", 404], ["/a%0ab", 400],
  ])("%s is refused with %i", (target, status) => {
    expect(keyForRequestTarget(target)).toMatchObject({ ok: false, status });
  });
});

describe("Range header", () => {
  it.each([
    ["bytes=0-9", 100, { kind: "partial", range: { start: 0, end: 9 } }],
    ["bytes=90-", 100, { kind: "partial", range: { start: 90, end: 99 } }],
    ["bytes=90-500", 100, { kind: "partial", range: { start: 90, end: 99 } }],
    ["bytes=-10", 100, { kind: "partial", range: { start: 90, end: 99 } }],
    ["bytes=-500", 100, { kind: "partial", range: { start: 0, end: 99 } }],
    ["bytes=100-", 100, { kind: "unsatisfiable" }],
    ["bytes=-0", 100, { kind: "unsatisfiable" }],
    ["bytes=0-0", 0, { kind: "unsatisfiable" }],
    ["bytes=5-2", 100, { kind: "full" }],
    ["bytes=0-1,5-6", 100, { kind: "full" }],
    ["items=0-1", 100, { kind: "full" }],
  ] as const)("%s of %i bytes", (header, size, expected) => {
    expect(parseRange(header, size)).toEqual(expected);
  });
});

describe("conditional requests", () => {
  const meta = { key: "k", size: 1, etag: '"abc"', lastModified: new Date("2026-11-01T10:00:00.500Z") };
  it("If-None-Match matches weakly and wins over If-Modified-Since", () => {
    expect(notModified({ "if-none-match": 'W/"abc"' }, meta)).toBe(true);
    expect(notModified({ "if-none-match": "*" }, meta)).toBe(true);
    expect(notModified({ "if-none-match": '"zzz"', "if-modified-since": "Sun, 01 Nov 2026 10:00:00 GMT" }, meta)).toBe(false);
  });
  it("If-Modified-Since compares whole seconds", () => {
    expect(notModified({ "if-modified-since": "Sun, 01 Nov 2026 10:00:00 GMT" }, meta)).toBe(true);
    expect(notModified({ "if-modified-since": "Sun, 01 Nov 2026 09:59:59 GMT" }, meta)).toBe(false);
    expect(notModified({ "if-modified-since": "not a date" }, meta)).toBe(false);
  });
  it("If-Range needs a strong ETag match or the exact date", () => {
    expect(rangeStillValid('"abc"', meta)).toBe(true);
    expect(rangeStillValid('W/"abc"', meta)).toBe(false);
    expect(rangeStillValid("Sun, 01 Nov 2026 10:00:00 GMT", meta)).toBe(true);
    expect(rangeStillValid("Sun, 01 Nov 2026 10:00:01 GMT", meta)).toBe(false);
  });
});
