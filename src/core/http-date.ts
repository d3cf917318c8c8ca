/**
 * The one HTTP-date parser (the HMAC kit's Date check, the gateway's Date
 * skew check and its HMAC fast path, `relcast serve`'s If-Modified-Since and
 * If-Range, the CLI's --date/--now): strict IMF-fixdate
 * (`Sun, 06 Nov 1994 08:49:37 GMT`), the form RFC 9110 §5.6.7 requires
 * senders to generate and the only Date form service spec §5.2 allows.
 *
 * The obsolete RFC 850 and asctime forms, which RFC 9110 asks recipients to
 * tolerate, are refused on purpose, each named in the reason: an HMAC
 * signature covers the Date value byte for byte, so a signer must produce
 * the one form; a conditional request with another form is then treated as
 * having no valid date (RFC 9110 §13.1.3 ignores it), which costs a 304
 * and never serves wrong bytes. Beyond the grammar the date must exist
 * (no 30 Feb), its weekday must be the real one, the time of day in range
 * (second 60, a leap second, reads as the next second).
 */
const DAY_NAMES = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"] as const;
const MONTH_NAMES = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"] as const;

export type HttpDateResult = { ok: true; date: Date } | { ok: false; reason: string };

export function formatHttpDate(date: Date): string {
  const pad = (n: number, width = 2) => String(n).padStart(width, "0");
  return (
    `${DAY_NAMES[date.getUTCDay()]}, ${pad(date.getUTCDate())} ${MONTH_NAMES[date.getUTCMonth()]} ` +
    `${pad(date.getUTCFullYear(), 4)} ${pad(date.getUTCHours())}:${pad(date.getUTCMinutes())}:${pad(date.getUTCSeconds())} GMT`
  );
}

/**
 * The last date read and its time. A busy caller sends the same Date value
 * for a whole second (thousands of requests at the gateway's rates, each
 * read twice), so the one entry answers most reads.
 */
let lastWellFormed: { value: string; time: number } | undefined;

export function parseHttpDate(value: string): HttpDateResult {
  if (value === lastWellFormed?.value) return { ok: true, date: new Date(lastWellFormed.time) };
  const read = readImfFixdate(value);
  if (typeof read === "string") return { ok: false, reason: read };
  lastWellFormed = { value, time: read };
  return { ok: true, date: new Date(read) };
}

const EXAMPLE = '"Sun, 06 Nov 1994 08:49:37 GMT"';
const NOT_IMF_FIXDATE = `is not an RFC 9110 IMF-fixdate such as ${EXAMPLE}`;
const DAY_MS = 86_400_000;
/** The Gregorian calendar repeats every 400 years; Date.UTC reads years 0-99 as 1900-1999, so those are read 400 years on. */
const FOUR_CENTURIES_MS = 146_097 * DAY_MS;
const MONTH_DAYS = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31] as const;
/** Day name or month name to its index, keyed by the three letters' char codes. */
const nameIndex = (names: readonly string[]) => new Map(names.map((n, i) => [threeLetters(n, 0), i]));
const DAY_INDEX = nameIndex(DAY_NAMES);
const MONTH_INDEX = nameIndex(MONTH_NAMES);

/**
 * The time of an IMF-fixdate, or the reason it is not one, in one pass by
 * char code (no regex, no Date per field): every request the gateway
 * authenticates by HMAC comes here. A valid date is read with the fewest
 * steps; the letters' shape is looked at only to name what is wrong.
 */
function readImfFixdate(value: string): number | string {
  if (value.length !== 29 || !hasSeparators(value)) return notImfFixdate(value);
  const day = twoDigits(value, 5);
  const year = twoDigits(value, 12) * 100 + twoDigits(value, 14);
  const hour = twoDigits(value, 17);
  const minute = twoDigits(value, 20);
  const second = twoDigits(value, 23);
  // One NaN (a character that is not an ASCII digit) makes the sum NaN.
  if (Number.isNaN(day + year + hour + minute + second)) return notImfFixdate(value);
  const month = MONTH_INDEX.get(threeLetters(value, 8));
  const dayIndex = DAY_INDEX.get(threeLetters(value, 0));
  if (month === undefined || dayIndex === undefined) {
    if (!isName(value, 0) || !isName(value, 8)) return notImfFixdate(value);
    return month === undefined ? `has an unknown month name "${value.slice(8, 11)}"` : `has an unknown day name "${value.slice(0, 3)}"`;
  }
  if (hour > 23 || minute > 59 || second > 60) return "has a time of day out of range";
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  if (day < 1 || day > (month === 1 && leap ? 29 : MONTH_DAYS[month]!)) return `names a day that does not exist (${value.slice(5, 16)})`;
  const midnight = year < 100 ? Date.UTC(year + 400, month, day) - FOUR_CENTURIES_MS : Date.UTC(year, month, day);
  // 1 Jan 1970 was a Thursday (4).
  const weekday = (((midnight / DAY_MS + 4) % 7) + 7) % 7;
  if (weekday !== dayIndex) return `says ${value.slice(0, 3)} but ${value.slice(5, 16)} is a ${DAY_NAMES[weekday]}`;
  return midnight + ((hour * 60 + minute) * 60 + second) * 1000;
}

/** `Www, DD Mmm YYYY HH:MM:SS GMT`: everything but the names and the digits. */
function hasSeparators(v: string): boolean {
  return (
    v.charCodeAt(3) === 0x2c && v.charCodeAt(4) === 0x20 && v.charCodeAt(7) === 0x20 && v.charCodeAt(11) === 0x20 &&
    v.charCodeAt(16) === 0x20 && v.charCodeAt(19) === 0x3a && v.charCodeAt(22) === 0x3a && v.endsWith(" GMT")
  );
}

/** A capital and two small ASCII letters at `at`: the shape of a day or month name. */
function isName(v: string, at: number): boolean {
  const [a, b, c] = [v.charCodeAt(at), v.charCodeAt(at + 1), v.charCodeAt(at + 2)];
  return a >= 0x41 && a <= 0x5a && b >= 0x61 && b <= 0x7a && c >= 0x61 && c <= 0x7a;
}

function notImfFixdate(value: string): string {
  return value.length > 64 ? "is longer than any IMF-fixdate" : obsoleteFormReason(value);
}

/** Names the obsolete forms a recipient usually meets, so the sender learns what to change; only refusals come here. */
function obsoleteFormReason(value: string): string {
  if (/^(?:Mon|Tues|Wednes|Thurs|Fri|Satur|Sun)day, \d{2}-[A-Z][a-z]{2}-\d{2} \d{2}:\d{2}:\d{2} GMT$/.test(value)) {
    return `is the obsolete RFC 850 form; send an IMF-fixdate such as ${EXAMPLE}`;
  }
  if (/^[A-Z][a-z]{2} [A-Z][a-z]{2} [ \d]\d \d{2}:\d{2}:\d{2} \d{4}$/.test(value)) {
    return `is the obsolete asctime form; send an IMF-fixdate such as ${EXAMPLE}`;
  }
  return NOT_IMF_FIXDATE;
}

/** Three ASCII characters as one number (no two spellings share one); -1 for anything else, which no name has. */
function threeLetters(s: string, at: number): number {
  const a = s.charCodeAt(at);
  const b = s.charCodeAt(at + 1);
  const c = s.charCodeAt(at + 2);
  // Without this check "St\u016e" packs to the same number as "Sun" (0x74 << 8 | 0x16e === 0x75 << 8 | 0x6e).
  return (a | b | c) < 0x80 ? (a << 16) | (b << 8) | c : -1;
}

/** Two ASCII digits at `at` as a number, or NaN. */
function twoDigits(s: string, at: number): number {
  const a = s.charCodeAt(at) - 0x30;
  const b = s.charCodeAt(at + 1) - 0x30;
  return a >= 0 && a <= 9 && b >= 0 && b <= 9 ? a * 10 + b : NaN;
}
