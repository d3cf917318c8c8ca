import type { IncomingMessage } from "node:http";
import { describe, expect, it } from "vitest";
import { formatHttpDate, parseHttpDate } from "../../src/core/http-date.js";
import { HttpError } from "../../src/gateway/http/http-error.js";
import { checkDateSkew } from "../../src/gateway/middleware/date-skew.js";
import { checkDate } from "../../src/hmac/check-date.js";
import { notModified } from "../../src/site/serve/conditional.js";
import { seededRandom } from "../hmac/seeded-random.js";

/**
 * Issue 34: one HTTP-date parser. Every caller (the HMAC kit's Date check,
 * the gateway's Date skew check that its fast path runs, relcast serve's
 * If-Modified-Since) accepts exactly the values core/http-date accepts, at
 * the same time; and core/http-date agrees with a plain reference reading
 * of the IMF-fixdate grammar written here from RFC 9110 §5.6.7, on valid
 * dates and on seeded mutations of them.
 */

/** RFC 9110 IMF-fixdate read the obvious way: a regex, then Date to check the day and the weekday. */
function reference(value: string): number | undefined {
  const m = /^(Sun|Mon|Tue|Wed|Thu|Fri|Sat), (\d\d) (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) (\d{4}) (\d\d):(\d\d):(\d\d) GMT$/.exec(value);
  if (!m) return undefined;
  const [day, month, year, hour, minute, second] = [Number(m[2]), "JanFebMarAprMayJunJulAugSepOctNovDec".indexOf(m[3]!) / 3, Number(m[4]), Number(m[5]), Number(m[6]), Number(m[7])];
  if (hour > 23 || minute > 59 || second > 60) return undefined;
  const date = new Date(0);
  date.setUTCFullYear(year, month, day);
  if (date.getUTCFullYear() !== year || date.getUTCMonth() !== month || date.getUTCDate() !== day) return undefined;
  if ("SunMonTueWedThuFriSat".indexOf(m[1]!) / 3 !== date.getUTCDay()) return undefined;
  return date.getTime() + ((hour * 60 + minute) * 60 + second) * 1000;
}

/** What each caller made of one value: the time it read, or undefined for a refusal on the date's form. */
function callers(value: string): Record<string, number | undefined> {
  const core = parseHttpDate(value);
  const time = core.ok ? core.date.getTime() : undefined;
  const now = new Date(time ?? Date.UTC(2025, 0, 7, 10));
  const kit = checkDate({ date: value }, now, 300, () => "");
  let gateway: number | undefined = time;
  try {
    checkDateSkew({ headers: { date: value } } as unknown as IncomingMessage, now, 300);
  } catch (err) {
    expect(err).toBeInstanceOf(HttpError);
    expect((err as HttpError).extra).toEqual({ check: "date-format" });
    gateway = undefined;
  }
  if (!kit.ok) {
    expect(kit.check).toBe("date-format");
    if (!core.ok) expect(kit.message).toContain(core.reason);
  }
  // If-Modified-Since one second after the object's time: a valid date means 304.
  const serve = time !== undefined && time > -8.64e15 + 1000 ? notModified({ "if-modified-since": value }, { key: "k", size: 0, etag: "e", lastModified: new Date(time - 1000) }) : core.ok;
  return { core: time, kit: kit.ok ? time : undefined, gateway, serve: serve ? time : undefined };
}

function expectAllAgree(value: string): void {
  const expected = reference(value);
  const seen = callers(value);
  expect(seen, JSON.stringify(value)).toEqual({ core: expected, kit: expected, gateway: expected, serve: expected });
}

describe("one HTTP-date parser for every caller", () => {
  it.each([
    ["a plain date", "Sun, 06 Nov 1994 08:49:37 GMT", true],
    ["29 Feb in a leap year", "Thu, 29 Feb 2024 12:00:00 GMT", true],
    ["29 Feb 2000 (a 400th year)", "Tue, 29 Feb 2000 00:00:00 GMT", true],
    ["a leap second", "Wed, 31 Dec 2025 23:59:60 GMT", true],
    ["year 0099 (Date.UTC would read 1999)", "Thu, 31 Dec 0099 23:59:59 GMT", true],
    ["29 Feb 0000", "Tue, 29 Feb 0000 00:00:00 GMT", true],
    ["30 Feb", "Fri, 30 Feb 2024 08:49:37 GMT", false],
    ["31 Apr", "Thu, 31 Apr 2025 08:49:37 GMT", false],
    ["29 Feb 1900 (a century, not leap)", "Thu, 29 Feb 1900 00:00:00 GMT", false],
    ["29 Feb in a common year", "Sat, 29 Feb 2025 08:49:37 GMT", false],
    ["day 00", "Sat, 00 Mar 2025 08:49:37 GMT", false],
    ["a wrong weekday", "Mon, 06 Nov 1994 08:49:37 GMT", false],
    ["hour 24", "Sun, 06 Nov 1994 24:00:00 GMT", false],
    ["hour 99", "Sun, 06 Nov 1994 99:00:00 GMT", false],
    ["minute 60", "Sun, 06 Nov 1994 08:60:00 GMT", false],
    ["second 61", "Sun, 06 Nov 1994 08:49:61 GMT", false],
    ["an RFC 850 date", "Sunday, 06-Nov-94 08:49:37 GMT", false],
    ["an asctime date", "Sun Nov  6 08:49:37 1994", false],
    ["non-ASCII digits", "Sun, ٠6 Nov 1994 08:49:37 GMT", false],
    ["a lower-case month", "Sun, 06 nov 1994 08:49:37 GMT", false],
    ["UTC for GMT", "Sun, 06 Nov 1994 08:49:37 UTC", false],
    // The old fast reader packed three char codes by 8-bit shifts: these collided with "Sun" and "Nov" and were accepted.
    ["a day name that packs like Sun", "St\u016e, 06 Nov 1994 08:49:37 GMT", false],
    ["a month name that packs like Nov", "Sun, 06 Nn\u0176 1994 08:49:37 GMT", false],
  ])("%s: every caller gives the same answer", (_name, value, valid) => {
    expect(reference(value) !== undefined).toBe(valid);
    expectAllAgree(value);
  });

  it("names the obsolete forms and the fault in the refusal", () => {
    const reason = (v: string) => {
      const parsed = parseHttpDate(v);
      return parsed.ok ? "accepted" : parsed.reason;
    };
    expect(reason("Sunday, 06-Nov-94 08:49:37 GMT")).toMatch(/obsolete RFC 850 form; send an IMF-fixdate/);
    expect(reason("Sun Nov  6 08:49:37 1994")).toMatch(/obsolete asctime form; send an IMF-fixdate/);
    expect(reason("Thu, 29 Feb 1900 00:00:00 GMT")).toBe("names a day that does not exist (29 Feb 1900)");
    expect(reason("Mon, 06 Nov 1994 08:49:37 GMT")).toBe("says Mon but 06 Nov 1994 is a Sun");
  });

  it("the last value read is remembered only when it was valid, and never answers for another value", () => {
    const valid = "Tue, 07 Jan 2025 10:00:00 GMT";
    expect(parseHttpDate(valid)).toEqual({ ok: true, date: new Date("2025-01-07T10:00:00Z") });
    expect(parseHttpDate("Tue, 07 Jan 2025 10:00:01 GMT")).toEqual({ ok: true, date: new Date("2025-01-07T10:00:01Z") });
    expect(parseHttpDate("Wed, 07 Jan 2025 10:00:00 GMT").ok).toBe(false);
    expect(parseHttpDate(valid)).toEqual({ ok: true, date: new Date("2025-01-07T10:00:00Z") });
    // Each answer is a Date of its own: changing one does not change the next.
    const first = parseHttpDate(valid);
    if (first.ok) first.date.setTime(0);
    expect(parseHttpDate(valid)).toEqual({ ok: true, date: new Date("2025-01-07T10:00:00Z") });
  });

  it("agrees with the reference on valid dates from year 0 to 9999 and on seeded mutations of them", () => {
    const random = seededRandom(0x34da7e);
    const pieces = ["0", "1", "2", "3", "5", "6", "9", " ", ",", ":", "-", "G", "a", "Z", "Feb", "Sun", "Mon", "31", "29", "60", "24", "\u0660", "\u016e", "\u0176"];
    let valid = 0;
    for (let i = 0; i < 30_000; i++) {
      const time = random.int(253_402_300_800) * 1000 - 62_167_219_200_000; // 0000-01-01 .. 9999-12-31
      let value = formatHttpDate(new Date(time));
      if (i % 3 !== 0) {
        for (let m = 1 + random.int(2); m > 0; m--) {
          const at = random.int(value.length);
          const piece = random.pick(pieces);
          value = value.slice(0, at) + piece + value.slice(at + (random.chance(0.8) ? piece.length : 0));
        }
      }
      const expected = reference(value);
      if (expected !== undefined) valid++;
      const parsed = parseHttpDate(value);
      expect(parsed.ok ? parsed.date.getTime() : undefined, value).toBe(expected);
      if (i % 10 === 0) expectAllAgree(value);
    }
    expect(valid).toBeGreaterThan(10_000);
  });
});
