/**
 * The bounds a rollout's pauses must keep with the release they belong to.
 * A pause before the release was published would move its pubDate by time
 * during which nobody was offered anything, and the pubDate must stay one an
 * RFC 822 date (and Sparkle's date parser) can hold: a four-digit year.
 */
export const LAST_PUBDATE_MS = Date.UTC(9999, 11, 31, 23, 59, 59);

/** How far ahead of this machine's clock a pause or resume time (`--at`) may be: clocks of CI runners drift. */
export const CLOCK_SKEW_MS = 5 * 60_000;

/** Problems of the pauses of a release published at `publishedMs` (whole seconds), each with the pause index. */
export function rolloutBoundIssues(publishedMs: number, marker: { pauses: ReadonlyArray<{ pausedAt: string; resumedAt?: string | undefined }> }): Array<{ index: number; message: string }> {
  const issues: Array<{ index: number; message: string }> = [];
  let paused = 0;
  marker.pauses.forEach((p, index) => {
    const from = Date.parse(p.pausedAt);
    if (from < publishedMs) issues.push({ index, message: `pausedAt ${p.pausedAt} is before the release was published (${new Date(publishedMs).toISOString()})` });
    if (p.resumedAt !== undefined) paused += Math.max(0, Date.parse(p.resumedAt) - from);
  });
  if (publishedMs + paused > LAST_PUBDATE_MS) {
    issues.push({ index: marker.pauses.length - 1, message: `the pauses add up to a pubDate after the year 9999 (${Math.round(paused / 86_400_000)} days paused)` });
  }
  return issues;
}
