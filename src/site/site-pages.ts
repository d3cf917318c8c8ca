import type { CatalogView } from "../catalog/catalog-entry.js";
import { CHANGELOG_KEY, INDEX_KEY } from "../domain/release-layout.js";
import { renderChangelogPage } from "./changelog-page.js";
import { renderDownloadsPage } from "./downloads-page.js";
import type { PageIdentity } from "./page-head.js";

export type { PageIdentity } from "./page-head.js";

/**
 * The site's pages as the site step writes them from a catalog view:
 * index.html (the product page) and changelog.html (every release's notes),
 * both from the view's records and nothing else of relcast's. One function
 * for the planner and for `verify`, which compares the stored pages with
 * these bytes.
 */
export function sitePages(identity: PageIdentity, view: Pick<CatalogView, "count" | "records">): Array<{ key: string; bytes: Buffer }> {
  const catalog = { count: view.count, versions: view.records };
  return [
    { key: INDEX_KEY, bytes: Buffer.from(renderDownloadsPage(identity, catalog)) },
    { key: CHANGELOG_KEY, bytes: Buffer.from(renderChangelogPage(identity, catalog)) },
  ];
}
