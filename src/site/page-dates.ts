import { isValidTimeZone } from "../config/schema.js";
import { escapeHtml } from "../core/html-escape.js";
import { parseIsoTimestamp } from "../core/iso-timestamp.js";
import type { ReleaseRecord } from "../domain/record-schema.js";
import { fromTimestamp } from "../domain/timestamps.js";

const formats = new Map<string, Intl.DateTimeFormat>();

/** "27 November 2026": day, month name, year, as people read a date on a product page. */
export function personDate(instant: Date, timeZone: string): string {
  let format = formats.get(timeZone);
  if (!format) {
    format = new Intl.DateTimeFormat("en-GB", { day: "numeric", month: "long", year: "numeric", timeZone });
    formats.set(timeZone, format);
  }
  return format.format(instant);
}

/**
 * The zone a release's dates are shown in: the config's `timezone` when it
 * was published (the record's publishedAtTimezone), so a page is the same
 * whichever machine renders it; UTC for records that name none.
 */
export function recordZone(r: Pick<ReleaseRecord, "publishedAtTimezone">): string {
  return r.publishedAtTimezone !== undefined && isValidTimeZone(r.publishedAtTimezone) ? r.publishedAtTimezone : "UTC";
}

/** `<time datetime="<ISO 8601>">27 November 2026</time>`: machine-readable instant, human date. */
export function timeElement(instant: Date, timeZone: string): string {
  return `<time datetime="${escapeHtml(instant.toISOString())}">${escapeHtml(personDate(instant, timeZone))}</time>`;
}

export function publishedInstant(r: Pick<ReleaseRecord, "publishedAt">): Date {
  return fromTimestamp(r.publishedAt);
}

/** When a yanked release was yanked (undefined when the record does not say, or says it unreadably). */
export function yankedInstant(r: Pick<ReleaseRecord, "yankedAt">): Date | undefined {
  if (r.yankedAt === undefined) return undefined;
  const parsed = parseIsoTimestamp(r.yankedAt);
  return parsed.ok ? parsed.date : undefined;
}
