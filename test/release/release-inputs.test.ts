import { describe, expect, it } from "vitest";
import { parseReleaseNotes } from "../../src/domain/release-notes.js";
import { formatLocal, publishedTimes, rfc822 } from "../../src/domain/timestamps.js";
import { normalizeVersion } from "../../src/domain/version-input.js";

describe("release notes", () => {
  it("list items of either bullet are the notes; a lazy continuation line joins its item; an empty item is dropped", () => {
    const notes = parseReleaseNotes("\uFEFF- First\r\n\n*  Second  \nThird\n-\n");
    expect(notes.list).toEqual(["First", "Second Third"]);
    expect(notes.text).toBe("- First\n- Second Third");
  });
});

describe("version input", () => {
  it.each([["1.2.3", "1.2.3"], ["v1.2.3", "1.2.3"], ["1.3.0-beta.1", "1.3.0-beta.1"], [" 2.0.0 ", "2.0.0"]])("%s → %s", (input, out) => {
    expect(normalizeVersion(input)).toBe(out);
  });
  it.each(["1.2", "01.2.3", "1.2.3+4", "vv1.2.3", "1.2.3.4", "latest", ""])("refuses %s", (input) => {
    expect(() => normalizeVersion(input)).toThrow(/semantic version|build metadata/);
  });
});

describe("timestamps", () => {
  const at = new Date("2026-07-04T18:30:05.250Z");
  it("splits publishedAt into seconds and nanoseconds", () => {
    expect(publishedTimes(at, "Asia/Tokyo")).toEqual({
      publishedAt: { _seconds: 1783189805, _nanoseconds: 250_000_000 },
      publishedAtIso: "2026-07-04T18:30:05.250Z",
      publishedAtLocal: "Sunday, July 5, 2026 at 3:30:05 AM GMT+9",
      publishedAtTimezone: "Asia/Tokyo",
    });
  });
  it("formats local time in the configured zone, with daylight saving", () => {
    expect(formatLocal(at, "America/New_York")).toBe("Saturday, July 4, 2026 at 2:30:05 PM EDT");
  });
  it("writes RFC 822 dates the way generate_appcast does", () => {
    expect(rfc822(new Date("2006-01-09T19:20:11Z"))).toBe("Mon, 09 Jan 2006 19:20:11 +0000");
  });
});
