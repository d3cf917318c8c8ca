import { describe, expect, it } from "vitest";
import { parseIsoTimestamp } from "../../src/core/iso-timestamp.js";

describe("parseIsoTimestamp", () => {
  it.each([
    ["2026-02-30T00:00:00Z", "day 30 of February 2026, which has 28 days"],
    ["2025-02-29T00:00:00Z", "day 29 of February 2025, which has 28 days"],
    ["1900-02-29T00:00:00Z", "day 29 of February 1900, which has 28 days"],
    ["0099-02-29T00:00:00Z", "day 29 of February 99, which has 28 days"],
    ["2026-04-31T00:00:00+01:00", "day 31 of April 2026, which has 30 days"],
    ["2026-13-01T00:00:00Z", "month 13"],
    ["2026-00-10T00:00:00Z", "month 00"],
    ["2026-01-00T00:00:00Z", "day 00"],
    ["2026-01-31T24:00:00Z", "hour 24"],
    ["2026-01-31T12:60:00Z", "minute 60"],
    ["2026-01-31T12:00:60Z", "second 60"],
    ["2026-01-31T12:00:00", "names no time zone"],
    ["2026-01-31", "a date without a time"],
    ["2026-01-31T12:00:00+24:00", "offset +24:00"],
    ["next tuesday", "not an ISO 8601 timestamp"],
    ["2026-1-31T12:00:00Z", "not an ISO 8601 timestamp"],
  ])("refuses %s", (text, reason) => {
    const r = parseIsoTimestamp(text);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.reason).toContain(reason);
  });

  it.each([
    ["2024-02-29T00:00:00Z", "2024-02-29T00:00:00.000Z"],
    ["2026-01-31T12:00:00.000Z", "2026-01-31T12:00:00.000Z"],
    ["2026-01-31T12:00Z", "2026-01-31T12:00:00.000Z"],
    ["2026-01-31t12:00:00z", "2026-01-31T12:00:00.000Z"],
    ["2026-01-31T12:00:00.123456789Z", "2026-01-31T12:00:00.123Z"],
    ["2026-03-01T00:30:00+01:00", "2026-02-28T23:30:00.000Z"],
    ["2000-02-29T00:00:00-05:00", "2000-02-29T05:00:00.000Z"],
    ["0400-02-29T00:00:00Z", "0400-02-29T00:00:00.000Z"],
  ])("reads %s as %s", (text, iso) => {
    const r = parseIsoTimestamp(text);
    expect(r.ok && r.date.toISOString()).toBe(iso);
  });
});
