/**
 * Strict RFC 7231 IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`), the only
 * Date form spec §5.2 allows. The obsolete RFC 850 and asctime forms that
 * HTTP recipients usually tolerate are refused on purpose: the signature
 * covers the Date value byte for byte, so a sender must produce this form.
 */
const DAY_NAMES = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"] as const;
const MONTH_NAMES = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"] as const;

const IMF_FIXDATE = /^([A-Z][a-z]{2}), (\d{2}) ([A-Z][a-z]{2}) (\d{4}) (\d{2}):(\d{2}):(\d{2}) GMT$/;

export type HttpDateResult = { ok: true; date: Date } | { ok: false; reason: string };

export function formatHttpDate(date: Date): string {
  const pad = (n: number, width = 2) => String(n).padStart(width, "0");
  return (
    `${DAY_NAMES[date.getUTCDay()]}, ${pad(date.getUTCDate())} ${MONTH_NAMES[date.getUTCMonth()]} ` +
    `${pad(date.getUTCFullYear(), 4)} ${pad(date.getUTCHours())}:${pad(date.getUTCMinutes())}:${pad(date.getUTCSeconds())} GMT`
  );
}

export function parseHttpDate(value: string): HttpDateResult {
  if (value.length > 64) return { ok: false, reason: "is longer than any IMF-fixdate" };
  const m = IMF_FIXDATE.exec(value);
  if (!m) {
    return {
      ok: false,
      reason: "is not an RFC 7231 IMF-fixdate such as \"Sun, 06 Nov 1994 08:49:37 GMT\"",
    };
  }
  const [, dayName, dd, monthName, yyyy, hh, mi, ss] = m as unknown as [string, string, string, string, string, string, string, string];
  const month = (MONTH_NAMES as readonly string[]).indexOf(monthName);
  if (month < 0) return { ok: false, reason: `has an unknown month name "${monthName}"` };
  const dayIndex = (DAY_NAMES as readonly string[]).indexOf(dayName);
  if (dayIndex < 0) return { ok: false, reason: `has an unknown day name "${dayName}"` };

  const year = Number(yyyy);
  const day = Number(dd);
  const hour = Number(hh);
  const minute = Number(mi);
  const second = Number(ss);
  if (hour > 23 || minute > 59 || second > 60) return { ok: false, reason: "has a time of day out of range" };

  const midnight = new Date(Date.UTC(2000, month, day));
  midnight.setUTCFullYear(year); // Date.UTC maps years 0–99 to 1900–1999
  if (midnight.getUTCMonth() !== month || midnight.getUTCDate() !== day) {
    return { ok: false, reason: `names a day that does not exist (${dd} ${monthName} ${yyyy})` };
  }
  if (midnight.getUTCDay() !== dayIndex) {
    return { ok: false, reason: `says ${dayName} but ${dd} ${monthName} ${yyyy} is a ${DAY_NAMES[midnight.getUTCDay()]}` };
  }
  // RFC 7231 allows second 60 (leap second); it is read as the next second.
  return { ok: true, date: new Date(midnight.getTime() + ((hour * 60 + minute) * 60 + second) * 1000) };
}
