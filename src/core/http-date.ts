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

/**
 * The last well-formed date read and its time. A busy caller sends the same
 * Date value for a whole second (thousands of requests at the gateway's
 * rates, each read twice), so the one entry answers most reads.
 */
let lastWellFormed: { value: string; time: number } | undefined;

export function parseHttpDate(value: string): HttpDateResult {
  if (value === lastWellFormed?.value) return { ok: true, date: new Date(lastWellFormed.time) };
  // Every HMAC request's Date comes here (twice in the gateway), so a well-formed date is read by char code first.
  const time = wellFormedTime(value);
  if (time !== undefined) {
    lastWellFormed = { value, time };
    return { ok: true, date: new Date(time) };
  }
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

const DAY_MS = 86_400_000;
const MONTH_DAYS = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31] as const;
/** Day name or month name to its index, keyed by the three letters' char codes. */
const nameIndex = (names: readonly string[]) => new Map(names.map((n, i) => [threeLetters(n, 0), i]));
const DAY_INDEX = nameIndex(DAY_NAMES);
const MONTH_INDEX = nameIndex(MONTH_NAMES);

function threeLetters(s: string, at: number): number {
  return (s.charCodeAt(at) << 16) | (s.charCodeAt(at + 1) << 8) | s.charCodeAt(at + 2);
}

/** Two ASCII digits at `at` as a number, or NaN. */
function twoDigits(s: string, at: number): number {
  const a = s.charCodeAt(at) - 0x30;
  const b = s.charCodeAt(at + 1) - 0x30;
  return a >= 0 && a <= 9 && b >= 0 && b <= 9 ? a * 10 + b : NaN;
}

/**
 * The time of an IMF-fixdate that is valid in every respect (the format, a
 * day that exists, its weekday, the time of day, a year from 100 on), read
 * without a regex or a Date per field; undefined for anything else, which
 * parseHttpDate then reads the long way to say what is wrong. It accepts
 * exactly what the long way accepts, with the same time.
 */
function wellFormedTime(value: string): number | undefined {
  if (value.length !== 29 || value.charCodeAt(3) !== 0x2c || !value.endsWith(" GMT")) return undefined;
  if (value.charCodeAt(4) !== 0x20 || value.charCodeAt(7) !== 0x20 || value.charCodeAt(11) !== 0x20 || value.charCodeAt(16) !== 0x20) return undefined;
  if (value.charCodeAt(19) !== 0x3a || value.charCodeAt(22) !== 0x3a) return undefined;
  const dayIndex = DAY_INDEX.get(threeLetters(value, 0));
  const month = MONTH_INDEX.get(threeLetters(value, 8));
  const day = twoDigits(value, 5);
  const year = twoDigits(value, 12) * 100 + twoDigits(value, 14);
  const hour = twoDigits(value, 17);
  const minute = twoDigits(value, 20);
  const second = twoDigits(value, 23);
  // NaN fails every comparison below.
  if (dayIndex === undefined || month === undefined || !(year >= 100 && hour <= 23 && minute <= 59 && second <= 60)) return undefined;
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  if (!(day >= 1 && day <= (month === 1 && leap ? 29 : MONTH_DAYS[month]!))) return undefined;
  const midnight = Date.UTC(year, month, day);
  // 1 Jan 1970 was a Thursday (4).
  if ((((midnight / DAY_MS + 4) % 7) + 7) % 7 !== dayIndex) return undefined;
  // RFC 7231 allows second 60 (leap second); it is read as the next second, as below.
  return midnight + ((hour * 60 + minute) * 60 + second) * 1000;
}
