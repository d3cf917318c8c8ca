import { PAGE_RELEASES } from "../catalog/catalog-view.js";
import { escapeHtml } from "../core/html-escape.js";
import { expectedLatest } from "../domain/latest-choice.js";
import { recordNotesHtml } from "../domain/notes/notes-html.js";
import type { ReleaseRecord } from "../domain/record-schema.js";
import { CHANGELOG_KEY, publicCatalogKey } from "../domain/release-layout.js";
import { headTags, iconImage, iconOf, type PageIdentity } from "./page-head.js";
import { fillTemplate, packageFile } from "./page-template.js";
import { archiveNav, archivePageCount } from "./archive-pages.js";
import { badges, factsLine, versionId, yankNote } from "./release-facts.js";

function entry(r: ReleaseRecord, latest: ReleaseRecord | undefined): string {
  const id = versionId(r.version);
  const notes = recordNotesHtml(r, { topHeadingLevel: 3 });
  const mark = r === latest ? ` <span class="badge latest">latest</span>` : "";
  return `<article class="entry${r.yanked ? " is-yanked" : ""}" id="${escapeHtml(id)}" aria-labelledby="${escapeHtml(id)}-h">`
    + `<h2 id="${escapeHtml(id)}-h">Version ${escapeHtml(r.version)}${mark}${badges(r)}</h2>`
    + factsLine(r)
    + yankNote(r)
    + (notes ? `<div class="notes">${notes}</div>` : `<p class="summary">${escapeHtml(r.summary)}</p>`)
    + `</article>`;
}

/**
 * changelog.html: the plugin's own history, every release's notes newest
 * first (catalog order), yanked ones marked with when and why. Like
 * index.html it holds the newest {@link PAGE_RELEASES}; the archive pages
 * (archive-pages.ts), linked at its end, hold every release's notes.
 */
export function renderChangelogPage(identity: PageIdentity, catalog: { count: number; versions: readonly ReleaseRecord[] }): string {
  const shown = catalog.versions.slice(0, PAGE_RELEASES);
  const latest = expectedLatest(catalog.versions);
  const older = catalog.count - shown.length;
  const title = `${identity.displayName} release notes`;
  const body = shown.length === 0
    ? "<p>No releases yet.</p>"
    : shown.map((r) => entry(r, latest)).join("\n")
      + (older > 0
        ? `\n<p class="older">The notes and downloads of ${older} older release${older === 1 ? " are" : "s are"} on the archive pages, numbered from the first release (and in <a href="${escapeHtml(publicCatalogKey(identity.pluginId))}">releases.json</a>):</p>`
          + archiveNav(archivePageCount(catalog.count))
        : "");
  return fillTemplate(
    packageFile("templates/changelog.html"),
    { title, displayName: identity.displayName },
    {
      css: packageFile("templates/site.css"),
      head: headTags(identity, {
        path: CHANGELOG_KEY, title, icon: iconOf(latest ?? catalog.versions[0]),
        description: `What changed in each version of ${identity.displayName}, by ${identity.publisher}, newest first.`,
      }),
      icon: iconImage(iconOf(latest ?? catalog.versions[0])),
      entries: body,
    },
  );
}
