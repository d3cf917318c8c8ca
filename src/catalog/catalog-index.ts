import { RELEASES_PREFIX } from "../domain/release-layout.js";
import { releaseRecordSchema, type ReleaseRecord } from "../domain/record-schema.js";
import type { ObjectStore } from "../store/object-store.js";
import { CatalogEntries, type CatalogView } from "./catalog-entry.js";

/**
 * `releases/catalog-index.json`: the catalog view of the catalog with a given
 * ETag (one short row per release plus the few full records a publish writes
 * from). A publish reads it instead of parsing a catalog of thousands of
 * releases; it is only trusted while the catalog still has that ETag, so a
 * stale or lost index costs one full read of the catalog, never a wrong answer.
 */
export const CATALOG_INDEX_KEY = `${RELEASES_PREFIX}catalog-index.json`;
const FORMAT = 2;

/** Views known to be in the store's index already (read from it, or written to it). */
const indexed = new WeakSet<CatalogView>();

export function isIndexed(view: CatalogView): boolean {
  return indexed.has(view);
}

interface IndexHead {
  format: number;
  catalogEtag: string;
  limit: number | null;
  pluginId: string;
  count: number;
  firstOffset: number | null;
  records: unknown[];
}

/**
 * One JSON object: the head on its first line, ending in `"entries":[`,
 * then one entry row a line (see {@link CatalogEntries}), then `]}`. So a
 * publish reads the head with JSON.parse and keeps the rows as text.
 */
export function serializeCatalogIndex(view: CatalogView, limit: number | undefined): string {
  const head: IndexHead = {
    format: FORMAT, catalogEtag: view.etag, limit: limit ?? null, pluginId: view.pluginId, count: view.count, firstOffset: view.firstOffset ?? null, records: view.records,
  };
  const rows = view.entries.text;
  return `${JSON.stringify(head).slice(0, -1)},"entries":[\n${rows}${rows === "" ? "" : "\n"}]}\n`;
}

const isInt = (v: unknown): v is number => typeof v === "number" && Number.isInteger(v);
const ENTRIES = ',"entries":[';
const END = "]}\n";

/** The view the index holds, if it describes the catalog with this ETag under this appcast limit; else undefined. */
export function parseCatalogIndex(text: string, catalogEtag: string, limit: number | undefined): CatalogView | undefined {
  const firstLine = text.indexOf("\n");
  if (firstLine === -1 || !text.endsWith(END) || !text.slice(0, firstLine).endsWith(ENTRIES)) return undefined;
  let file: Partial<IndexHead>;
  try {
    file = JSON.parse(`${text.slice(0, firstLine - ENTRIES.length)}}`) as Partial<IndexHead>;
  } catch {
    return undefined;
  }
  if (file.format !== FORMAT || file.catalogEtag !== catalogEtag || file.limit !== (limit ?? null)) return undefined;
  if (typeof file.pluginId !== "string" || !isInt(file.count) || !Array.isArray(file.records)) return undefined;
  const rows = text.slice(firstLine + 1, -END.length);
  if (rows !== "" && !rows.endsWith("\n")) return undefined;
  const entries = CatalogEntries.fromText(rows.slice(0, -1));
  if (!entries || entries.length !== file.count) return undefined;
  const records: ReleaseRecord[] = [];
  for (const r of file.records) {
    const parsed = releaseRecordSchema.safeParse(r);
    if (!parsed.success) return undefined;
    records.push(parsed.data);
  }
  const view: CatalogView = { etag: catalogEtag, pluginId: file.pluginId, count: file.count, entries, records, firstOffset: isInt(file.firstOffset) ? file.firstOffset : undefined };
  indexed.add(view);
  return view;
}

export async function readCatalogIndex(store: ObjectStore, catalogEtag: string, limit: number | undefined): Promise<CatalogView | undefined> {
  const got = await store.get(CATALOG_INDEX_KEY);
  return got ? parseCatalogIndex(got.body.toString("utf8"), catalogEtag, limit) : undefined;
}
