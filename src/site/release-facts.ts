import { isPaused } from "../domain/rollout-state.js";
import { escapeHtml } from "../core/html-escape.js";
import type { ReleaseRecord } from "../domain/record-schema.js";
import { downloadKey, zipFileName } from "../domain/release-layout.js";
import { publishedInstant, recordZone, timeElement, yankedInstant } from "./page-dates.js";

/** 1,234,567 bytes → "1.2 MB" (decimal units, as Finder shows sizes). */
export function humanSize(bytes: number): string {
  const units = ["bytes", "KB", "MB", "GB", "TB"];
  let value = bytes;
  let unit = 0;
  while (value >= 1000 && unit < units.length - 1) {
    value /= 1000;
    unit++;
  }
  return unit === 0 ? `${bytes} bytes` : `${value.toFixed(value < 10 ? 1 : 0)} ${units[unit]}`;
}

/** An element id for a version (`v1.2.0`), the same on both pages so `changelog.html#v1.2.0` lands on it. */
export function versionId(version: string): string {
  return `v${version.replace(/[^A-Za-z0-9.-]/g, "-")}`;
}

// Links are relative to the site root, so the page works on any host and under `relcast serve`.
export const dmgHref = (r: ReleaseRecord): string => downloadKey(r.objectStore.artifactFileName);
export const zipHref = (r: ReleaseRecord): string => downloadKey(zipFileName(r.pluginId, r.version));

/** "Requires macOS 12.0 or later", from the bundle's LSMinimumSystemVersion as recorded at publish; empty for records without it. */
export function requirement(r: ReleaseRecord): string {
  const min = r.autoupdate?.minimumSystemVersion;
  return min ? `Requires macOS ${escapeHtml(min)} or later` : "";
}

/** The line under a version's heading: when it came out, and what it needs. */
export function factsLine(r: ReleaseRecord, lead = ""): string {
  const parts = [`${lead}${timeElement(publishedInstant(r), recordZone(r))}`, requirement(r)].filter((p) => p !== "");
  return `<p class="facts">${parts.map((p) => `<span>${p}</span>`).join("")}</p>`;
}

/** Small labels after a version's name: yanked, a channel other than stable, a prerelease. */
export function badges(r: ReleaseRecord): string {
  const out: string[] = [];
  if (r.yanked) out.push(`<span class="badge yanked">yanked</span>`);
  if (isPaused(r)) out.push(`<span class="badge rollout-paused">Rollout paused</span>`);
  if (r.channel !== "stable") out.push(`<span class="badge">${escapeHtml(r.channel)}</span>`);
  else if (r.version.includes("-")) out.push(`<span class="badge">prerelease</span>`);
  return out.length > 0 ? ` ${out.join(" ")}` : "";
}

/** Why and when a yanked release was withdrawn, as text (the reason is never markup). */
export function yankNote(r: ReleaseRecord): string {
  if (!r.yanked) return "";
  const when = yankedInstant(r);
  const at = when ? ` on ${timeElement(when, recordZone(r))}` : "";
  return `<p class="yank" role="note">Withdrawn${at}${r.yankedReason ? `: ${escapeHtml(r.yankedReason)}` : ""}. It is no longer offered for download or as an update.</p>`;
}

/** A paused phased rollout (relcast rollout pause): since when, and that it is not offered as an update meanwhile. */
export function rolloutNote(r: ReleaseRecord): string {
  if (!isPaused(r)) return "";
  const since = r.rollout!.pauses.at(-1)!.pausedAt;
  return `<p class="rollout" role="note">Rollout paused since ${timeElement(new Date(since), recordZone(r))}: not offered as an update until it is resumed.</p>`;
}

/** The SHA-256 of each download, folded away: people who check them open it. */
export function checksums(r: ReleaseRecord, id: string): string {
  const rows: Array<[string, string | undefined]> = [[r.objectStore.artifactFileName, r.sha256]];
  if (r.autoupdate) rows.push([zipFileName(r.pluginId, r.version), r.autoupdate.sha256]);
  const shown = rows.filter((row): row is [string, string] => row[1] !== undefined);
  if (shown.length === 0) return "";
  return `<details class="checksums" id="${escapeHtml(id)}"><summary>SHA-256 checksums</summary><dl>${shown.map(([name, sum]) => `<dt>${escapeHtml(name)}</dt><dd><code>${escapeHtml(sum)}</code></dd>`).join("")}</dl></details>`;
}
