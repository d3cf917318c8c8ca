import type { RelcastConfig } from "../config/schema.js";
import type { CatalogView } from "../catalog/catalog-entry.js";
import { CHANGELOG_KEY, INDEX_KEY } from "../domain/release-layout.js";
import { renderChangelogPage } from "./changelog-page.js";
import { renderDownloadsPage } from "./downloads-page.js";

/** What the pages are rendered from besides the catalog. */
export type PageIdentity = Pick<RelcastConfig, "displayName" | "publisher" | "pluginId">;

/**
 * The site's pages as the site step writes them from a catalog view:
 * index.html (from the view's records) and changelog.html. One function for
 * the planner and for `verify`, which compares the stored pages with these
 * bytes.
 */
export function sitePages(config: PageIdentity, view: Pick<CatalogView, "count" | "records">): Array<{ key: string; bytes: Buffer }> {
  return [
    { key: INDEX_KEY, bytes: Buffer.from(renderDownloadsPage(config, { count: view.count, versions: view.records })) },
    { key: CHANGELOG_KEY, bytes: Buffer.from(renderChangelogPage(config)) },
  ];
}
