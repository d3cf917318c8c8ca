/**
 * Strict ISO 8601 / RFC 3339 timestamps (`2026-01-31T12:00:00.000Z`). JavaScript's
 * Date rolls a day the month does not have over into the next month
 * (`2026-02-30` becomes March 2nd) and reads a timestamp without an offset as
 * local time; here both are refused, with the reason, so a timestamp is taken
 * as meant or not at all.
 */
const ISO = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2})(?::(\d{2})(\.\d{1,9})?)?([Zz]|[+-]\d{2}:\d{2})?$/;
const MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"];

export type IsoTimestampResult = { ok: true; date: Date } | { ok: false; reason: string };

/** Proleptic Gregorian, as ISO 8601 counts (Date.UTC would read years 0-99 as 1900-1999). */
function daysInMonth(year: number, month: number): number {
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  return [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1]!;
}

export function parseIsoTimestamp(text: string): IsoTimestampResult {
  if (text.length > 64) return { ok: false, reason: "is longer than any ISO 8601 timestamp" };
  const m = ISO.exec(text);
  if (!m) {
    if (/^\d{4}-\d{2}-\d{2}$/.test(text)) return { ok: false, reason: "is a date without a time" };
    return { ok: false, reason: "is not an ISO 8601 timestamp (YYYY-MM-DDTHH:MM:SS[.fff] and Z or ±HH:MM)" };
  }
  const [year, month, day, hour, minute, second] = [m[1], m[2], m[3], m[4], m[5], m[6] ?? "0"].map(Number) as [number, number, number, number, number, number];
  const offset = m[8];
  if (month < 1 || month > 12) return { ok: false, reason: `has month ${m[2]}; months run 01 to 12` };
  const days = daysInMonth(year, month);
  if (day < 1 || day > days) return { ok: false, reason: `names day ${m[3]} of ${MONTHS[month - 1]} ${year}, which has ${days} days` };
  if (hour > 23) return { ok: false, reason: `has hour ${m[4]}; hours run 00 to 23` };
  if (minute > 59) return { ok: false, reason: `has minute ${m[5]}; minutes run 00 to 59` };
  if (second > 59) return { ok: false, reason: `has second ${m[6]}; seconds run 00 to 59 (leap seconds are not representable)` };
  if (offset === undefined) return { ok: false, reason: "names no time zone (it would be read as this machine's local time); end it with Z or an offset such as +01:00" };
  if (offset.length === 6 && (Number(offset.slice(1, 3)) > 23 || Number(offset.slice(4, 6)) > 59)) return { ok: false, reason: `has the offset ${offset}, which is not a time zone offset` };
  const date = new Date(text.toUpperCase());
  if (Number.isNaN(date.getTime())) return { ok: false, reason: "is outside the dates JavaScript can hold" };
  return { ok: true, date };
}

/** True for a strict ISO 8601 timestamp (see {@link parseIsoTimestamp}). */
export function isIsoTimestamp(text: string): boolean {
  return parseIsoTimestamp(text).ok;
}
