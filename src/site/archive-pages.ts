import { PAGE_RELEASES } from "../catalog/catalog-view.js";
import { escapeHtml } from "../core/html-escape.js";
import { recordNotesHtml } from "../domain/notes/notes-html.js";
import type { ReleaseRecord } from "../domain/record-schema.js";
import { headTags, iconImage, iconOf, type PageIdentity } from "./page-head.js";
import { fillTemplate, packageFile } from "./page-template.js";
import { badges, checksums, dmgHref, factsLine, humanSize, rolloutNote, versionId, yankNote, zipHref } from "./release-facts.js";

/**
 * The archive: every release, notes and downloads, on pages of
 * {@link PAGE_RELEASES} numbered from the OLDEST release, so a release stays
 * on the same page for good. Page n holds releases (n-1)·50+1 … n·50 counted
 * from the first ever published; a publish of a new newest release changes
 * only the last page (and the one before it when it starts a new page, for
 * its "newer" link). A store of at most {@link PAGE_RELEASES} releases has
 * no archive: changelog.html and index.html show them all.
 */
export function archivePageCount(count: number): number {
  return count > PAGE_RELEASES ? Math.ceil(count / PAGE_RELEASES) : 0;
}

/** The store key (and the site path) of archive page `n` (1 = the oldest releases). */
export function archivePageKey(n: number): string {
  return `changelog-${n}.html`;
}

/** The archive page holding the release at `newestFirstIndex` in catalog order (0 = the newest) of `count`. */
export function archivePageOf(newestFirstIndex: number, count: number): number {
  return Math.floor((count - 1 - newestFirstIndex) / PAGE_RELEASES) + 1;
}

/** Where page `n`'s releases are in catalog order (newest first): `records.slice(start, end)`. */
export function archivePageSlice(n: number, count: number): { start: number; end: number } {
  return { start: Math.max(0, count - n * PAGE_RELEASES), end: count - (n - 1) * PAGE_RELEASES };
}

/** Links to every archive page, for changelog.html and index.html (rendered on every change anyway). */
export function archiveNav(pageCount: number): string {
  if (pageCount === 0) return "";
  const links = Array.from({ length: pageCount }, (_, i) => `<a href="${archivePageKey(i + 1)}">${i + 1}</a>`);
  return `<nav class="pager" id="archive" aria-label="Archive pages">${links.join("")}</nav>`;
}

/**
 * An archive page's own links: the older page, the newer one (the newest
 * release notes from the last page) and the list of every page. Nothing
 * here depends on how many pages there are, so an old page never changes
 * when a new one is added.
 */
function pagerOf(n: number, last: boolean): string {
  const links = [
    n > 1 ? `<a href="${archivePageKey(n - 1)}" rel="prev">Older</a>` : `<span>Older</span>`,
    `<a href="changelog.html#archive">All pages</a>`,
    last ? `<a href="changelog.html">Newest</a>` : `<a href="${archivePageKey(n + 1)}" rel="next">Newer</a>`,
  ];
  return `<nav class="pager" aria-label="Archive page ${n}">${links.join("")}</nav>`;
}

/** One release in the archive: its facts, notes (or summary) and, unless yanked, its downloads and checksums. */
function archiveEntry(r: ReleaseRecord): string {
  const id = versionId(r.version);
  const notes = recordNotesHtml(r, { topHeadingLevel: 3 });
  const links = r.yanked ? [] : [
    `<a href="${escapeHtml(dmgHref(r))}" download>Disk image (${humanSize(r.sizeBytes)})</a>`,
    ...(r.autoupdate ? [`<a href="${escapeHtml(zipHref(r))}" download>Update archive (${humanSize(r.autoupdate.sizeBytes)})</a>`] : []),
  ];
  return `<article class="entry${r.yanked ? " is-yanked" : ""}" id="${escapeHtml(id)}" aria-labelledby="${escapeHtml(id)}-h">`
    + `<h2 id="${escapeHtml(id)}-h">Version ${escapeHtml(r.version)}${badges(r)}</h2>`
    + factsLine(r)
    + yankNote(r)
    + rolloutNote(r)
    + (notes ? `<div class="notes">${notes}</div>` : r.summary ? `<p class="summary">${escapeHtml(r.summary)}</p>` : "")
    + (links.length > 0 ? `<p class="links">${links.join(`<span aria-hidden="true"> · </span>`)}</p>` : "")
    + (r.yanked ? "" : checksums(r, `sha-${id}`))
    + `</article>`;
}

/**
 * Archive page `n` of a catalog of `count` releases, from the records of
 * that page alone (catalog order, newest first): nothing on it depends on
 * another page's releases or on which release is latest, so it changes only
 * when one of its own releases does, or (for its "newer" link) when it stops
 * being the last page.
 */
export function renderArchivePage(identity: PageIdentity, n: number, count: number, records: readonly ReleaseRecord[]): string {
  const first = (n - 1) * PAGE_RELEASES + 1;
  const last = first + records.length - 1;
  const title = `${identity.displayName} releases, page ${n}`;
  const icon = iconOf(records[0]);
  return fillTemplate(
    packageFile("templates/archive.html"),
    { title, displayName: identity.displayName, range: `Releases ${first} to ${last} in the order they were published, newest first` },
    {
      css: packageFile("templates/site.css"),
      head: headTags(identity, {
        path: archivePageKey(n), title, icon,
        description: `Release notes and downloads of ${identity.displayName}, by ${identity.publisher}: releases ${first} to ${last}.`,
      }),
      icon: iconImage(icon),
      pager: pagerOf(n, n === archivePageCount(count)),
      entries: records.map(archiveEntry).join("\n"),
    },
  );
}

/** Archive pages `which` rendered from the full catalog (catalog order, newest first). */
export function archivePages(identity: PageIdentity, versions: readonly ReleaseRecord[], which: Iterable<number>): Array<{ key: string; bytes: Buffer }> {
  const out: Array<{ key: string; bytes: Buffer }> = [];
  for (const n of which) {
    const { start, end } = archivePageSlice(n, versions.length);
    out.push({ key: archivePageKey(n), bytes: Buffer.from(renderArchivePage(identity, n, versions.length, versions.slice(start, end))) });
  }
  return out;
}

/** 1 … the number of archive pages of `count` releases. */
export function allArchivePages(count: number): number[] {
  return Array.from({ length: archivePageCount(count) }, (_, i) => i + 1);
}
