import { readFile } from "node:fs/promises";
import { parseCatalog } from "../domain/catalog.js";
import type { ReleaseRecord } from "../domain/record-schema.js";
import { CATALOG_KEY } from "../domain/release-layout.js";
import type { ContentSource } from "../domain/release-plan.js";
import type { ObjectStore } from "../store/object-store.js";
import type { CatalogView } from "../catalog/catalog-entry.js";
import { PAGE_RELEASES } from "../catalog/catalog-view.js";
import { allArchivePages, archivePageCount, archivePageKey, archivePageOf, archivePages } from "./archive-pages.js";
import type { PageIdentity } from "./page-head.js";

/**
 * Which archive pages a change may alter (archive-pages.ts): a new newest
 * release only the last page (and the one before when it starts a page);
 * a yank, unyank or rollout change the page of its version; anything else
 * (a release inserted below the newest, a rebuild, `site sync`) every page,
 * of which only those whose bytes differ are written.
 */
export type ArchiveScope = { kind: "newest" } | { kind: "versions"; versions: readonly string[] } | { kind: "all" };

export interface ArchiveInputs {
  source: ObjectStore;
  /** Where the site is written (a page past the last one there is removed). */
  target: ObjectStore;
  view: Pick<CatalogView, "count" | "records">;
  /** The catalog the view is of, when a plan is about to write it; undefined: the source store's. */
  catalog: { source: ContentSource } | undefined;
  scope: ArchiveScope | undefined;
}

async function catalogText(source: ObjectStore, catalog: ArchiveInputs["catalog"]): Promise<{ text: string; where: string } | undefined> {
  const s = catalog?.source;
  if (s?.kind === "bytes") return { text: s.bytes.toString("utf8"), where: "the planned catalog" };
  if (s?.kind === "file") return { text: await readFile(s.file, "utf8"), where: s.file };
  const got = await source.get(CATALOG_KEY);
  return got ? { text: got.body.toString("utf8"), where: source.uriFor(CATALOG_KEY) } : undefined;
}

/** The newest releases of the view, if its records start with them (they do: it keeps the newest {@link PAGE_RELEASES} + 1). */
function newestRecords(view: ArchiveInputs["view"], n: number): readonly ReleaseRecord[] | undefined {
  return n <= PAGE_RELEASES + 1 && view.records.length >= n ? view.records.slice(0, n) : undefined;
}

/** The archive pages to render for a change, with their bytes; `stale` are keys of pages past the last one (a rebuild left fewer releases). */
export async function plannedArchivePages(identity: PageIdentity, inputs: ArchiveInputs): Promise<{ pages: Array<{ key: string; bytes: Buffer }>; stale: string[] }> {
  const { count } = inputs.view;
  const pageCount = archivePageCount(count);
  const scope = inputs.scope ?? { kind: "all" };
  if (scope.kind === "newest") {
    if (pageCount === 0) return { pages: [], stale: [] };
    // The last page, and the one before it when the new release opened the last page (its "newer" link changes).
    const which = count % PAGE_RELEASES === 1 ? [pageCount - 1, pageCount] : [pageCount];
    const needed = count - (which[0]! - 1) * PAGE_RELEASES;
    const newest = newestRecords(inputs.view, needed);
    if (newest) {
      // archivePages slices by position in the full catalog: the older positions, never read, stay empty.
      const padded = [...newest, ...new Array<ReleaseRecord>(count - needed)];
      return { pages: archivePages(identity, padded, which), stale: [] };
    }
  }
  const text = await catalogText(inputs.source, inputs.catalog);
  if (!text) return { pages: [], stale: [] };
  const versions = parseCatalog(text.text, text.where).versions;
  let which = allArchivePages(versions.length);
  if (scope.kind === "versions") {
    const pages = new Set<number>();
    for (const v of scope.versions) {
      const at = versions.findIndex((r) => r.version === v);
      if (at >= 0 && archivePageCount(versions.length) > 0) pages.add(archivePageOf(at, versions.length));
    }
    which = [...pages].sort((a, b) => a - b);
  }
  const stale = scope.kind === "all" ? await archivePagesPast(inputs.target, archivePageCount(versions.length)) : [];
  return { pages: archivePages(identity, versions, which), stale };
}

/** Names in the archive pages' own pattern at the site's root: `changelog-<anything>.html` (or `.htm`). */
export const ARCHIVE_NAME = /^changelog-[^/]*\.html?$/;

/**
 * Every object named like an archive page that is not one of pages 1 to
 * `last`: pages past the last (a rebuild listing fewer releases, or a
 * removal interrupted part way, which leaves gaps), and names relcast never
 * writes (`changelog-0.html`, `changelog-01.html`). Found by one listing of
 * the `changelog-` prefix, not by probing `last + 1` until a miss.
 */
export async function archivePagesPast(store: ObjectStore, last: number): Promise<string[]> {
  const own = new Set(Array.from({ length: last }, (_, i) => archivePageKey(i + 1)));
  const found: string[] = [];
  for await (const meta of store.list("changelog-")) if (ARCHIVE_NAME.test(meta.key) && !own.has(meta.key)) found.push(meta.key);
  return found;
}
