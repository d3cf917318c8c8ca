import { RELEASES_PREFIX } from "../domain/release-layout.js";
import { releaseRecordSchema, type ReleaseRecord } from "../domain/record-schema.js";
import { isReleaseVersion } from "../domain/record-fields.js";
import type { ObjectStore } from "../store/object-store.js";
import type { CatalogEntry, CatalogView } from "./catalog-entry.js";

/**
 * `releases/catalog-index.json`: the catalog view of the catalog with a given
 * ETag (one short row per release plus the few full records a publish writes
 * from). A publish reads it instead of parsing a catalog of thousands of
 * releases; it is only trusted while the catalog still has that ETag, so a
 * stale or lost index costs one full read of the catalog, never a wrong answer.
 */
export const CATALOG_INDEX_KEY = `${RELEASES_PREFIX}catalog-index.json`;
const FORMAT = 1;

/** Views known to be in the store's index already (read from it, or written to it). */
const indexed = new WeakSet<CatalogView>();

export function isIndexed(view: CatalogView): boolean {
  return indexed.has(view);
}

type Row = [version: string, channel: string, build: string | null, seconds: number, nanoseconds: number, yanked: 0 | 1];

interface IndexFile {
  format: number;
  catalogEtag: string;
  limit: number | null;
  pluginId: string;
  count: number;
  firstOffset: number | null;
  entries: Row[];
  records: unknown[];
}

export function serializeCatalogIndex(view: CatalogView, limit: number | undefined): string {
  const file: IndexFile = {
    format: FORMAT, catalogEtag: view.etag, limit: limit ?? null, pluginId: view.pluginId, count: view.count, firstOffset: view.firstOffset ?? null,
    entries: view.entries.map((e) => [e.version, e.channel, e.build ?? null, e.publishedAt._seconds, e.publishedAt._nanoseconds, e.yanked ? 1 : 0]),
    records: view.records,
  };
  return JSON.stringify(file) + "\n";
}

const isInt = (v: unknown): v is number => typeof v === "number" && Number.isInteger(v);

function rowOk(r: unknown): r is Row {
  return Array.isArray(r) && r.length === 6 && typeof r[0] === "string" && isReleaseVersion(r[0]) && typeof r[1] === "string" && (r[2] === null || typeof r[2] === "string")
    && isInt(r[3]) && isInt(r[4]) && (r[5] === 0 || r[5] === 1);
}

/** The view the index holds, if it describes the catalog with this ETag under this appcast limit; else undefined. */
export function parseCatalogIndex(text: string, catalogEtag: string, limit: number | undefined): CatalogView | undefined {
  let file: Partial<IndexFile>;
  try {
    file = JSON.parse(text) as Partial<IndexFile>;
  } catch {
    return undefined;
  }
  if (file.format !== FORMAT || file.catalogEtag !== catalogEtag || file.limit !== (limit ?? null)) return undefined;
  if (typeof file.pluginId !== "string" || !isInt(file.count) || !Array.isArray(file.entries) || !Array.isArray(file.records)) return undefined;
  if (!file.entries.every(rowOk) || file.entries.length !== file.count) return undefined;
  const records: ReleaseRecord[] = [];
  for (const r of file.records) {
    const parsed = releaseRecordSchema.safeParse(r);
    if (!parsed.success) return undefined;
    records.push(parsed.data);
  }
  const entries: CatalogEntry[] = file.entries.map(([version, channel, build, seconds, nanoseconds, yanked]) => ({
    version, channel, build: build ?? undefined, publishedAt: { _seconds: seconds, _nanoseconds: nanoseconds }, yanked: yanked === 1,
  }));
  const view: CatalogView = { etag: catalogEtag, pluginId: file.pluginId, count: file.count, entries, records, firstOffset: isInt(file.firstOffset) ? file.firstOffset : undefined };
  indexed.add(view);
  return view;
}

export async function readCatalogIndex(store: ObjectStore, catalogEtag: string, limit: number | undefined): Promise<CatalogView | undefined> {
  const got = await store.get(CATALOG_INDEX_KEY);
  return got ? parseCatalogIndex(got.body.toString("utf8"), catalogEtag, limit) : undefined;
}
