import { describe, expect, it } from "vitest";
import { formatHttpDate, parseHttpDate } from "../../src/core/http-date.js";

describe("IMF-fixdate", () => {
  it("formats UTC with zero padding and drops milliseconds", () => {
    expect(formatHttpDate(new Date(Date.UTC(1994, 10, 6, 8, 49, 37, 999)))).toBe("Sun, 06 Nov 1994 08:49:37 GMT");
    expect(formatHttpDate(new Date(Date.UTC(2025, 0, 7, 0, 0, 0)))).toBe("Tue, 07 Jan 2025 00:00:00 GMT");
  });

  it("parses what it formats", () => {
    for (let t = 0; t < 4_102_444_800_000; t += 86_400_000 * 97 + 3_601_000) {
      const text = formatHttpDate(new Date(t));
      const parsed = parseHttpDate(text);
      expect(parsed, text).toEqual({ ok: true, date: new Date(Math.floor(t / 1000) * 1000) });
    }
  });

  it("accepts 29 Feb in a leap year and a leap second", () => {
    expect(parseHttpDate("Thu, 29 Feb 2024 12:00:00 GMT").ok).toBe(true);
    expect(parseHttpDate("Wed, 31 Dec 2025 23:59:60 GMT")).toEqual({ ok: true, date: new Date("2026-01-01T00:00:00Z") });
  });

  it.each([
    ["RFC 850 form", "Sunday, 06-Nov-94 08:49:37 GMT", /IMF-fixdate/],
    ["asctime form", "Sun Nov  6 08:49:37 1994", /IMF-fixdate/],
    ["ISO 8601", "1994-11-06T08:49:37Z", /IMF-fixdate/],
    ["UTC instead of GMT", "Sun, 06 Nov 1994 08:49:37 UTC", /IMF-fixdate/],
    ["numeric offset", "Sun, 06 Nov 1994 08:49:37 +0000", /IMF-fixdate/],
    ["one-digit day", "Sun, 6 Nov 1994 08:49:37 GMT", /IMF-fixdate/],
    ["two spaces", "Sun,  06 Nov 1994 08:49:37 GMT", /IMF-fixdate/],
    ["lower-case day name", "sun, 06 Nov 1994 08:49:37 GMT", /IMF-fixdate/],
    ["upper-case month", "Sun, 06 NOV 1994 08:49:37 GMT", /IMF-fixdate/],
    ["trailing space", "Sun, 06 Nov 1994 08:49:37 GMT ", /IMF-fixdate/],
    ["unknown month", "Sun, 06 Nox 1994 08:49:37 GMT", /unknown month/],
    ["unknown day", "Sut, 06 Nov 1994 08:49:37 GMT", /unknown day/],
    ["wrong weekday", "Mon, 06 Nov 1994 08:49:37 GMT", /is a Sun/],
    ["30 February", "Fri, 30 Feb 2024 08:49:37 GMT", /does not exist/],
    ["29 Feb in a common year", "Sat, 29 Feb 2025 08:49:37 GMT", /does not exist/],
    ["hour 24", "Sun, 06 Nov 1994 24:00:00 GMT", /out of range/],
    ["minute 60", "Sun, 06 Nov 1994 08:60:00 GMT", /out of range/],
    ["second 61", "Sun, 06 Nov 1994 08:49:61 GMT", /out of range/],
    ["huge", "Sun, 06 Nov 1994 08:49:37 GMT".repeat(100), /longer/],
    ["empty", "", /IMF-fixdate/],
  ])("refuses %s", (_name, value, reason) => {
    const parsed = parseHttpDate(value);
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) expect(parsed.reason).toMatch(reason);
  });
});
