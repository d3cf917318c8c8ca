import { expectedLatest, mayBeLatest } from "../domain/latest-choice.js";
import { isYanked } from "../domain/yank-state.js";
import { PAGE_RELEASES } from "../catalog/catalog-view.js";
import type { ReleaseRecord } from "../domain/record-schema.js";
import { downloadKey, latestDownloadName, publicAppcastKey, publicCatalogKey } from "../domain/release-layout.js";
import { recordNotesHtml } from "../domain/notes/notes-html.js";
import { escapeHtml } from "../core/html-escape.js";
import { fillTemplate, packageFile } from "./page-template.js";
import { headTags, iconImage, iconOf, shortDescription, type PageIdentity } from "./page-head.js";
import { archiveNav, archivePageCount } from "./archive-pages.js";
import { badges, checksums, dmgHref, factsLine, humanSize, rolloutNote, versionId, yankNote, zipHref } from "./release-facts.js";

/** The disk image as the one main button; the update archive as a plain link and the checksums folded away under it. */
function downloadBlock(r: ReleaseRecord): string {
  const id = `sha-${versionId(r.version)}`;
  const also = r.autoupdate ? [`<a href="${escapeHtml(zipHref(r))}" download>Update archive (.zip, ${humanSize(r.autoupdate.sizeBytes)})</a>`, `<span>the plugin alone, as the built-in updater fetches it</span>`] : [];
  return `<p class="download"><a class="button" href="${escapeHtml(dmgHref(r))}" download>Download for Mac</a>`
    + `<span class="size">Disk image, ${humanSize(r.sizeBytes)}</span></p>`
    + (also.length > 0 ? `<p class="also">${also.join(`<span aria-hidden="true"> · </span>`)}</p>` : "")
    + checksums(r, id);
}

/** Why there is no latest stable release: none published, every one withdrawn, or the rest paused mid-rollout. */
function noLatest(shown: readonly ReleaseRecord[]): string {
  const stable = shown.filter((r) => mayBeLatest(r.version, r.channel));
  const [heading, text] = stable.length === 0
    ? ["No release yet", "No stable release has been published yet."]
    : stable.every(isYanked)
      ? ["No release available", "Every stable release was withdrawn; the versions below say why."]
      : ["No release available", "No stable release is available right now: each was withdrawn or its rollout is paused."];
  return `<section class="hero" id="latest" aria-labelledby="latest-heading"><h2 id="latest-heading">${heading}</h2><p>${text}</p></section>`;
}

function latestSection(latest: ReleaseRecord | undefined, pluginId: string, shown: readonly ReleaseRecord[]): string {
  if (!latest) return noLatest(shown);
  const notes = recordNotesHtml(latest, { topHeadingLevel: 4 });
  const stable = downloadKey(latestDownloadName(pluginId, "dmg"));
  return `<section class="hero" id="latest" aria-labelledby="latest-heading">`
    + `<h2 id="latest-heading">Version ${escapeHtml(latest.version)}${badges(latest)}</h2>`
    + factsLine(latest, "Released ")
    + (latest.summary ? `<p class="summary">${escapeHtml(latest.summary)}</p>` : "")
    + downloadBlock(latest)
    + (notes ? `<h3>What’s new</h3><div class="notes">${notes}</div>` : "")
    + `<p class="permalink">A link that always gets the newest version: <a href="${escapeHtml(stable)}">${escapeHtml(stable)}</a></p>`
    + `</section>`;
}

/** One earlier (or other-channel) version: its date and needs, and its downloads unless yanked; its notes are on the changelog. */
function otherVersion(r: ReleaseRecord): string {
  const id = versionId(r.version);
  const links = r.yanked ? [] : [
    `<a href="${escapeHtml(dmgHref(r))}" download>Disk image (${humanSize(r.sizeBytes)})</a>`,
    ...(r.autoupdate ? [`<a href="${escapeHtml(zipHref(r))}" download>Update archive (${humanSize(r.autoupdate.sizeBytes)})</a>`] : []),
  ];
  links.push(`<a href="changelog.html#${escapeHtml(id)}">Release notes</a>`);
  return `<li class="version${r.yanked ? " is-yanked" : ""}" id="${escapeHtml(id)}">`
    + `<h3>Version ${escapeHtml(r.version)}${badges(r)}</h3>${factsLine(r)}`
    + (r.summary ? `<p class="summary">${escapeHtml(r.summary)}</p>` : "")
    + yankNote(r)
    + rolloutNote(r)
    + `<p class="links">${links.join(`<span aria-hidden="true"> · </span>`)}</p>`
    + checksums(r, `sha-${id}`)
    + `</li>`;
}

function describe(identity: PageIdentity, latest: ReleaseRecord | undefined): string {
  if (!latest) return `${identity.displayName} for Mac, by ${identity.publisher}.`;
  const needs = latest.autoupdate?.minimumSystemVersion ? ` Requires macOS ${latest.autoupdate.minimumSystemVersion} or later.` : "";
  return shortDescription(`Download ${identity.displayName} ${latest.version} for Mac, by ${identity.publisher}.${needs}${latest.summary ? ` ${latest.summary}` : ""}`);
}

/**
 * index.html, a product page: the display name (and icon), the latest
 * stable release once, with the disk image as the main download, then the
 * other versions among the newest {@link PAGE_RELEASES} in catalog order
 * (newest first); older ones are on the archive pages it links
 * (archive-pages.ts), so the page stays small however long the history. `catalog.versions` must start with the
 * catalog's newest entries.
 */
export function renderDownloadsPage(identity: PageIdentity, catalog: { count: number; versions: readonly ReleaseRecord[] }): string {
  const latest = expectedLatest(catalog.versions);
  const shown = catalog.versions.slice(0, PAGE_RELEASES);
  const others = shown.filter((r) => r !== latest);
  const older = catalog.count - shown.length;
  const icon = iconOf(latest ?? catalog.versions[0]);
  const more = older > 0
    ? `<p class="older">The downloads and notes of ${older} older release${older === 1 ? " are" : "s are"} on the archive pages, numbered from the first release (and listed in <a href="${escapeHtml(publicCatalogKey(identity.pluginId))}">releases.json</a>):</p>`
      + archiveNav(archivePageCount(catalog.count))
    : "";
  const othersHtml = others.length > 0 || more
    ? `<section aria-labelledby="others-heading"><h2 id="others-heading">${latest ? "Other versions" : "Versions"}</h2>${others.length > 0 ? `<ul class="versions">\n${others.map(otherVersion).join("\n")}\n</ul>` : ""}${more}</section>`
    : "";
  return fillTemplate(
    packageFile("templates/downloads.html"),
    { displayName: identity.displayName, publisher: identity.publisher, appcastHref: publicAppcastKey(identity.pluginId), catalogHref: publicCatalogKey(identity.pluginId) },
    {
      css: packageFile("templates/site.css"),
      head: headTags(identity, { path: "", title: identity.displayName, description: describe(identity, latest), icon }),
      icon: iconImage(icon),
      latest: latestSection(latest, identity.pluginId, shown),
      others: othersHtml,
    },
  );
}

