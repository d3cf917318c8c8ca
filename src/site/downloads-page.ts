import type { RelcastConfig } from "../config/schema.js";
import { isPaused } from "../domain/rollout-state.js";
import { expectedLatest } from "../domain/latest-choice.js";
import { PAGE_RELEASES } from "../catalog/catalog-view.js";
import type { ReleaseRecord } from "../domain/record-schema.js";
import { downloadKey, latestDownloadName, publicAppcastKey, publicCatalogKey, zipFileName } from "../domain/release-layout.js";
import { recordNotesHtml } from "../domain/notes/notes-html.js";
import { escapeHtml } from "../core/html-escape.js";
import { fillTemplate, packageFile } from "./page-template.js";

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

// Links are relative to the site root, so the page works on any host and under `relcast serve`.
function dmgHref(r: ReleaseRecord): string {
  return downloadKey(r.objectStore.artifactFileName);
}

function zipHref(r: ReleaseRecord): string {
  return downloadKey(zipFileName(r.pluginId, r.version));
}

/** Notes headings sit under the release's <h3>. */
function notesList(r: ReleaseRecord): string {
  const html = recordNotesHtml(r, { topHeadingLevel: 4 });
  return html === "" ? "" : `<div class="notes">${html}</div>`;
}

function details(r: ReleaseRecord): string {
  const rows: Array<[string, string]> = [
    ["Published", `<time datetime="${escapeHtml(r.publishedAtIso ?? "")}">${escapeHtml(r.publishedAtIso ?? "")}</time>${r.publishedAtLocal ? ` (${escapeHtml(r.publishedAtLocal)}${r.publishedAtTimezone ? `, ${escapeHtml(r.publishedAtTimezone)}` : ""})` : ""}`],
    ["Disk image", `${humanSize(r.sizeBytes)} (${r.sizeBytes} bytes)`],
  ];
  if (r.sha256) rows.push(["SHA-256", `<code>${escapeHtml(r.sha256)}</code>`]);
  if (r.autoupdate) rows.push(["Build", String(r.autoupdate.buildNumber)]);
  if (r.channel && r.channel !== "stable") rows.push(["Channel", escapeHtml(r.channel)]);
  if (isPaused(r)) rows.push(["Rollout", `paused since ${escapeHtml(r.rollout!.pauses.at(-1)!.pausedAt)}: not offered as an update`]);
  if (r.yanked) rows.push(["Yanked", `${escapeHtml(r.yankedAt ?? "")}${r.yankedReason ? `: ${escapeHtml(r.yankedReason)}` : ""}`]);
  return `<dl>${rows.map(([k, v]) => `<dt>${k}</dt><dd>${v}</dd>`).join("")}</dl>`;
}

function buttons(r: ReleaseRecord, label: string): string {
  const zip = r.autoupdate
    ? `<a class="button secondary" href="${escapeHtml(zipHref(r))}" download>Update archive (.zip, ${humanSize(r.autoupdate.sizeBytes)})<span class="sr-only"> ${label}</span></a>`
    : "";
  return `<p class="buttons"><a class="button" href="${escapeHtml(dmgHref(r))}" download>Download .dmg (${humanSize(r.sizeBytes)})<span class="sr-only"> ${label}</span></a>${zip}</p>`;
}

function latestSection(latest: ReleaseRecord | undefined, pluginId: string): string {
  if (!latest) return "<p>No stable release has been published yet.</p>";
  const stable = downloadKey(latestDownloadName(pluginId, "dmg"));
  return `<article class="latest" id="latest" aria-labelledby="latest-version"><h3 id="latest-version">Version ${escapeHtml(latest.version)}</h3>`
    + `<p>${escapeHtml(latest.summary)}</p>${buttons(latest, `of version ${latest.version}`)}${details(latest)}${notesList(latest)}`
    + `<p>Always the newest: <a href="${escapeHtml(stable)}">${escapeHtml(stable)}</a></p></article>`;
}

function versionEntry(r: ReleaseRecord): string {
  const id = `v${r.version.replace(/[^A-Za-z0-9.-]/g, "-")}`;
  // A paused phased rollout (relcast rollout pause): its own marker, beside any yank mark.
  const paused = isPaused(r) ? ` <span class="rollout-paused">Rollout paused</span>` : "";
  const mark = (r.yanked ? ` <span class="yanked">yanked</span>` : "") + paused;
  const body = r.yanked ? "" : buttons(r, `of version ${r.version}`);
  return `<article class="release" id="${escapeHtml(id)}" aria-labelledby="${escapeHtml(id)}-h"><h3 id="${escapeHtml(id)}-h">Version ${escapeHtml(r.version)}${mark}</h3>`
    + `<p>${escapeHtml(r.summary)}</p>${body}${details(r)}${notesList(r)}</article>`;
}

/**
 * index.html: the latest stable version first, then the newest
 * {@link PAGE_RELEASES} versions in catalog order (newest first); older ones
 * are in the catalog JSON, so the page stays small however long the history.
 * `catalog.versions` must start with the catalog's newest entries.
 */
export function renderDownloadsPage(config: Pick<RelcastConfig, "displayName" | "publisher" | "pluginId">, catalog: { count: number; versions: readonly ReleaseRecord[] }): string {
  const latest = expectedLatest(catalog.versions);
  const shown = catalog.versions.slice(0, PAGE_RELEASES);
  const older = catalog.count - shown.length;
  const more = older > 0
    ? `\n<p class="older">${older} older release${older === 1 ? " is" : "s are"} listed in <a href="${escapeHtml(publicCatalogKey(config.pluginId))}">releases.json</a>; their downloads stay at <code>downloads/${escapeHtml(config.pluginId)}-&lt;version&gt;.dmg</code>.</p>`
    : "";
  return fillTemplate(
    packageFile("templates/downloads.html"),
    {
      displayName: config.displayName, publisher: config.publisher, count: String(catalog.count),
      appcastHref: publicAppcastKey(config.pluginId), catalogHref: publicCatalogKey(config.pluginId),
    },
    {
      css: packageFile("templates/site.css"),
      latest: latestSection(latest, config.pluginId),
      versions: shown.length > 0 ? shown.map(versionEntry).join("\n") + more : "<p>No releases yet.</p>",
    },
  );
}
