import { RelcastError } from "../core/errors.js";
import { expectedLatest } from "../domain/latest-choice.js";
import { CATALOG_KEY } from "../domain/release-layout.js";
import { releaseRecordSchema, type ReleaseRecord } from "../domain/record-schema.js";
import { isReleaseVersion } from "../domain/record-fields.js";
import type { ObjectStore } from "../store/object-store.js";
import type { BuildOrderEntry } from "../domain/build-order.js";
import { appcastRecords } from "../domain/appcast-selection.js";
import { isYanked } from "../domain/yank-state.js";
import { entryOf, type CatalogEntry, type CatalogView } from "./catalog-entry.js";
import { readCatalogIndex } from "./catalog-index.js";
import { scanCatalog } from "./catalog-scan.js";
import { compareNewestFirst } from "../domain/catalog.js";

/** How many of the newest releases index.html shows (the catalog JSON lists them all). */
export const PAGE_RELEASES = 50;

export function buildOrderEntriesOf(view: CatalogView | undefined): BuildOrderEntry[] {
  return (view?.entries ?? []).flatMap((e) => (e.build === undefined ? [] : [{ version: e.version, build: e.build, channel: e.channel }]));
}

/** The full records a view keeps (see {@link CatalogView}); `maxPerChannel` undefined = every appcast record. */
function keptRecords(ordered: readonly ReleaseRecord[], maxPerChannel: number | undefined): ReleaseRecord[] {
  const keep = new Set<ReleaseRecord>(ordered.slice(0, PAGE_RELEASES));
  for (const r of appcastRecords(ordered, maxPerChannel)) keep.add(r);
  const latest = expectedLatest(ordered);
  if (latest) keep.add(latest);
  for (const r of ordered) if (isYanked(r)) keep.add(r);
  return ordered.filter((r) => keep.has(r));
}

/**
 * Keeps the appcast candidates bounded while scanning: once a channel holds
 * twice its limit, the lower builds are dropped (they can never come back).
 */
class Reducer {
  private readonly seen: ReleaseRecord[] = [];
  constructor(private readonly maxPerChannel: number | undefined) {}

  add(record: ReleaseRecord): void {
    this.seen.push(record);
    if (this.seen.length >= 4 * (PAGE_RELEASES + (this.maxPerChannel ?? Infinity))) this.compact();
  }

  private compact(): void {
    const kept = keptRecords(this.seen, this.maxPerChannel);
    this.seen.length = 0;
    this.seen.push(...kept);
  }

  result(): ReleaseRecord[] {
    return keptRecords(this.seen, this.maxPerChannel);
  }
}

function notValid(source: string, index: number, what: string): RelcastError {
  return new RelcastError("E_CATALOG", `the catalog ${source} does not match the catalog envelope: versions.${index}${what}`, "restore it from the records with `relcast rebuild`");
}

/** One element of the catalog's `versions`, parsed and checked against §2.6. */
export function parseCatalogEntry(raw: Buffer, index: number, source: string): ReleaseRecord {
  const parsed = releaseRecordSchema.safeParse(parseJson(raw, index, source));
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw notValid(source, index, `.${issue?.path.join(".") ?? ""} ${issue?.message ?? ""}`.trimEnd());
  }
  return parsed.data;
}

function parseJson(raw: Buffer, index: number, source: string): unknown {
  try {
    return JSON.parse(raw.toString("utf8"));
  } catch (err) {
    throw new RelcastError("E_CATALOG", `the catalog ${source} is not valid JSON: versions[${index}] (${(err as Error).message})`, "restore it from the records with `relcast rebuild`");
  }
}

const isInt = (v: unknown): v is number => typeof v === "number" && Number.isInteger(v);

/**
 * The fields a publish orders and selects by, checked by hand (a full §2.6
 * check of 10,000 entries would cost more than the rest of the publish); the
 * records a view keeps get the full check. Other entries are copied as they are.
 */
function lightRecord(raw: Buffer, index: number, source: string): ReleaseRecord {
  const r = parseJson(raw, index, source) as Record<string, unknown>;
  if (typeof r !== "object" || r === null || Array.isArray(r)) throw notValid(source, index, " is not an object");
  if (typeof r.version !== "string") throw notValid(source, index, ".version is missing or not a string");
  // Versions become key segments: every entry's is checked, not only the records the view keeps.
  if (!isReleaseVersion(r.version)) throw notValid(source, index, `.version ${JSON.stringify(r.version)} is not a semantic version <major>.<minor>.<patch>[-prerelease]`);
  if (typeof r.channel !== "string") throw notValid(source, index, ".channel is missing or not a string");
  const at = r.publishedAt as Record<string, unknown> | undefined;
  if (typeof at !== "object" || at === null || !isInt(at._seconds) || !isInt(at._nanoseconds)) throw notValid(source, index, ".publishedAt is not {_seconds, _nanoseconds}");
  const auto = r.autoupdate as Record<string, unknown> | undefined;
  if (auto !== undefined && (typeof auto !== "object" || auto === null || !isInt(auto.buildNumber))) throw notValid(source, index, ".autoupdate.buildNumber is missing or not a whole number");
  if (r.yanked !== undefined && r.yanked !== true) throw notValid(source, index, ".yanked must be true or absent");
  return r as ReleaseRecord;
}

/** Reads a view from a stream of the catalog's bytes. */
export async function viewFromStream(source: string, etag: string, chunks: AsyncIterable<Buffer>, maxPerChannel: number | undefined): Promise<CatalogView> {
  const entries: CatalogEntry[] = [];
  const reducer = new Reducer(maxPerChannel);
  const indexOf = new Map<ReleaseRecord, number>();
  let firstOffset: number | undefined;
  const envelope = await scanCatalog(source, chunks, (raw, index, offset) => {
    const record = lightRecord(raw, index, source);
    if (index === 0) firstOffset = offset;
    entries.push(entryOf(record));
    indexOf.set(record, index);
    reducer.add(record);
  });
  const records = reducer.result().map((r) => {
    const parsed = releaseRecordSchema.safeParse(r);
    if (parsed.success) return parsed.data;
    const issue = parsed.error.issues[0];
    throw notValid(source, indexOf.get(r) ?? -1, `.${issue?.path.join(".") ?? ""} ${issue?.message ?? ""}`.trimEnd());
  });
  return { etag, pluginId: envelope.pluginId, count: entries.length, entries, records, firstOffset };
}

/** Where `record` goes in a catalog ordered newest first, and which entry (same version) it replaces. */
export function placement(entries: readonly CatalogEntry[], record: ReleaseRecord): { insertAt: number; replaces: number } {
  const replaces = entries.findIndex((e) => e.version === record.version);
  let insertAt = 0;
  for (let i = 0; i < entries.length; i++) {
    if (i === replaces) continue;
    if (compareNewestFirst(entries[i]!, record) <= 0) insertAt = i + 1;
    else break;
  }
  return { insertAt, replaces };
}

/** The view of the catalog after `record` was merged into it (no re-read), with the ETag the write returned. */
export function viewWith(view: CatalogView, record: ReleaseRecord, etag: string, maxPerChannel: number | undefined): CatalogView {
  const { insertAt, replaces } = placement(view.entries, record);
  const entries = [...view.entries];
  entries.splice(insertAt, 0, entryOf(record));
  if (replaces !== -1) entries.splice(replaces < insertAt ? replaces : replaces + 1, 1);
  const others = view.records.filter((r) => r.version !== record.version);
  const position = others.findIndex((r) => compareNewestFirst(r, record) > 0);
  others.splice(position === -1 ? others.length : position, 0, record);
  return { etag, pluginId: view.pluginId, count: entries.length, entries, records: keptRecords(others, maxPerChannel) };
}

// One catalog view per store and ETag: a publish reads the catalog in preflight
// and then finds it unchanged (or changed only by its own write) in every later step.
const cache = new Map<string, CatalogView>();

function cacheKey(store: ObjectStore, etag: string, maxPerChannel: number | undefined): string {
  return `${store.uriFor(CATALOG_KEY)}\n${etag}\n${maxPerChannel ?? "all"}`;
}

function rememberView(store: ObjectStore, view: CatalogView, maxPerChannel: number | undefined): void {
  if (cache.size >= 4) cache.delete(cache.keys().next().value!);
  cache.set(cacheKey(store, view.etag, maxPerChannel), view);
}

/** The store's current catalog as a view; undefined when nothing is published yet. */
export async function readCatalogView(store: ObjectStore, maxPerChannel: number | undefined): Promise<CatalogView | undefined> {
  const head = await store.head(CATALOG_KEY);
  if (!head) return undefined;
  const hit = cache.get(cacheKey(store, head.etag, maxPerChannel));
  if (hit) return hit;
  const indexed = await readCatalogIndex(store, head.etag, maxPerChannel);
  if (indexed) {
    rememberView(store, indexed, maxPerChannel);
    return indexed;
  }
  const got = await store.getStream(CATALOG_KEY);
  if (!got) return undefined;
  const view = await viewFromStream(store.uriFor(CATALOG_KEY), got.meta.etag, got.stream as AsyncIterable<Buffer>, maxPerChannel);
  rememberView(store, view, maxPerChannel);
  return view;
}
