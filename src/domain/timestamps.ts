/** The §2.6 timestamp fields, all derived from one instant. */
export interface Timestamp {
  _seconds: number;
  _nanoseconds: number;
}

export interface PublishedTimes {
  publishedAt: Timestamp;
  publishedAtIso: string;
  publishedAtLocal: string;
  publishedAtTimezone: string;
}

export function toTimestamp(date: Date): Timestamp {
  const ms = date.getTime();
  const seconds = Math.floor(ms / 1000);
  return { _seconds: seconds, _nanoseconds: (ms - seconds * 1000) * 1_000_000 };
}

export function fromTimestamp(ts: Timestamp): Date {
  return new Date(ts._seconds * 1000 + Math.floor(ts._nanoseconds / 1_000_000));
}

/** Human local time, e.g. "Monday, November 23, 2026 at 5:30:21 PM GMT+1". */
export function formatLocal(date: Date, timeZone: string): string {
  return new Intl.DateTimeFormat("en-US", { timeZone, dateStyle: "full", timeStyle: "long" }).format(date);
}

export function publishedTimes(date: Date, timeZone: string): PublishedTimes {
  return {
    publishedAt: toTimestamp(date),
    publishedAtIso: date.toISOString(),
    publishedAtLocal: formatLocal(date, timeZone),
    publishedAtTimezone: timeZone,
  };
}

/** RFC 822 date as Sparkle's generate_appcast writes it: `Wed, 09 Jan 2006 19:20:11 +0000`. */
export function rfc822(date: Date): string {
  const days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];
  const months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
  const p = (n: number) => String(n).padStart(2, "0");
  return `${days[date.getUTCDay()]}, ${p(date.getUTCDate())} ${months[date.getUTCMonth()]} ${date.getUTCFullYear()} ${p(date.getUTCHours())}:${p(date.getUTCMinutes())}:${p(date.getUTCSeconds())} +0000`;
}
