import { createHash } from "node:crypto";
import { isDeepStrictEqual } from "node:util";
import { CatalogEntries, entryOf } from "../catalog/catalog-entry.js";
import { CATALOG_INDEX_KEY, readIndexText } from "../catalog/catalog-index.js";
import { indexSignatureProblem } from "../catalog/catalog-index-signature.js";
import { viewOfCatalog } from "../catalog/catalog-view.js";
import { firstEntryOffset } from "../domain/catalog.js";
import type { Catalog, ReleaseRecord } from "../domain/record-schema.js";
import type { ObjectStore } from "../store/object-store.js";

const FIX = "it is only a cache: delete releases/catalog-index.json, or run relcast rebuild --key-file <release key> (it writes the index anew from the catalog, signed)";

/**
 * `releases/catalog-index.json` held against the catalog it names. A publish
 * trusts the index in place of the catalog while the catalog keeps its ETag
 * (its rows decide the build-order check, its records what the appcast and
 * pages say) and the run's release key signed it, so verify checks the
 * signature with the key installed copies have (`publicKey`: --public-key,
 * else the newest bundle's SUPublicEDKey) and compares every row and record
 * with the catalog it parsed (which the release rows compare with each
 * `release.json`). An unsigned index (an older relcast) no publish trusts:
 * a warning, the next publish replaces it.
 */
export async function catalogIndexFindings(store: ObjectStore, catalog: Catalog, bytes: Buffer, etag: string, publicKey: Uint8Array | undefined): Promise<{ problems: string[]; warnings: string[] }> {
  const got = await store.get(CATALOG_INDEX_KEY);
  if (!got) return { problems: [], warnings: [] };
  const where = store.uriFor(CATALOG_INDEX_KEY);
  const read = readIndexText(got.body.toString("utf8"));
  const sha256 = createHash("sha256").update(bytes).digest("hex");
  if (read.catalogEtag !== undefined && read.catalogEtag !== etag) {
    const wrong = wrongEtag(read.catalogEtag);
    // For another catalog: stale, not wrong (a publish stopped between the catalog and the index, or a run had no key). No publish uses it; the next rewrites it.
    // Naming no ETag at all (an older rebuild wrote the placeholder): a warning, not a problem. No publish trusts such
    // an index, so it costs one full read of the catalog and misleads nothing; the next publish with the key replaces
    // it. Another real ETag for the very same catalog bytes is stale like any other: a folder store copied elsewhere
    // (a backup restored) gives every file a new ETag, and that must not be reported.
    return { problems: [], warnings: wrong ? [`${where} ${wrong}, so no publish trusts it (each reads the catalog in full until it is replaced); ${FIX}`] : [] };
  }
  if (!read.ok && read.why.startsWith("it is unsigned")) return { problems: [], warnings: [`${where} ${read.why.slice(3)}: no publish trusts it, the next one writes a signed index`] };
  if (!read.ok) return { problems: [`${where} is not an index relcast wrote: ${read.why}; ${FIX}`], warnings: [] };
  const signature = publicKey ? await indexSignatureProblem(read, publicKey) : undefined;
  const signatureProblems = signature ? [`${where} cannot be trusted: ${signature}; ${FIX}`] : [];
  const signatureWarnings = publicKey ? [] : [`${where}: its signature was not checked (no public key: pass --public-key or publish bundles with SUPublicEDKey)`];
  const { view } = read;
  const found: string[] = [];
  if (read.catalogSha256 !== sha256) found.push(`names a catalog with SHA-256 ${read.catalogSha256.slice(0, 12)}…, the catalog has ${sha256.slice(0, 12)}…`);
  if (view.pluginId !== catalog.pluginId) found.push(`says plugin ${view.pluginId}, the catalog ${catalog.pluginId}`);
  if (view.count !== catalog.versions.length) found.push(`says ${view.count} releases, the catalog lists ${catalog.versions.length}`);
  found.push(...rowDifferences(view.entries, catalog.versions));
  const offset = firstEntryOffset(bytes, catalog);
  if (view.firstOffset !== offset) found.push(`says the first entry starts at byte ${view.firstOffset ?? "none"}, in the catalog it is ${offset ?? "none"}`);
  found.push(...recordDifferences(view.records, viewOfCatalog(catalog, etag, read.limit).records, catalog.versions));
  if (found.length === 0) return { problems: signatureProblems, warnings: signatureWarnings };
  const shown = found.slice(0, 4).join("; ") + (found.length > 4 ? `; and ${found.length - 4} more` : "");
  const trusted = signature === undefined && publicKey ? "and the next publish would trust it (it is signed with the release key)" : "which no publish trusts unless it is signed with its key";
  return { problems: [...signatureProblems, `${where} does not match the catalog it names (ETag ${etag}), ${trusted}: ${shown}; ${FIX}`], warnings: signatureWarnings };
}

/** An entity tag as HTTP writes one (RFC 9110): optional W/, then a quoted run of visible characters without quotes. */
const ETAG = /^(W\/)?"[\x21\x23-\x7e\x80-\xff]*"$/;

/**
 * Why an index naming another ETag than the catalog's is wrong rather than
 * stale, or undefined: stale. A catalog ETag is never the placeholder a
 * write stamps or other text that is no ETag.
 */
function wrongEtag(named: string): string | undefined {
  if (!ETAG.test(named)) return `names the catalog's ETag as ${JSON.stringify(named.slice(0, 60))}, which is no ETag`;
  return undefined;
}

const rowOf = (e: { version: string; channel: string; build: string | undefined; yanked: boolean; publishedAt: ReleaseRecord["publishedAt"] }) =>
  `channel ${e.channel}, build ${e.build ?? "none"}, ${e.yanked ? "yanked" : "not yanked"}, published ${e.publishedAt._seconds}.${e.publishedAt._nanoseconds}`;

/** Row by row, in catalog order: what the index says of each release against what the catalog says. */
function rowDifferences(entries: CatalogEntries, versions: readonly ReleaseRecord[]): string[] {
  if (entries.text === CatalogEntries.of(versions.map(entryOf)).text) return [];
  const found: string[] = [];
  const rows = [...entries];
  for (let i = 0; i < Math.max(rows.length, versions.length); i++) {
    const row = rows[i];
    const record = versions[i];
    if (!row) found.push(`it has no row for ${record!.version}`);
    else if (!record) found.push(`row ${row.version} is not in the catalog`);
    else if (row.version !== record.version) found.push(`row ${i + 1} is ${row.version}, the catalog's entry ${i + 1} is ${record.version}`);
    else if (rowOf(row) !== rowOf(entryOf(record))) found.push(`row ${row.version} says ${rowOf(row)}; the catalog says ${rowOf(entryOf(record))}`);
  }
  return found;
}

/** The full records it carries: each as the catalog has it, and those a publish writes from (the newest, the appcast's, latest, yanked and paused). */
function recordDifferences(records: readonly ReleaseRecord[], expected: readonly ReleaseRecord[], versions: readonly ReleaseRecord[]): string[] {
  const found: string[] = [];
  // Field by field, in any key order: a yank's record is re-made with its fields in another order than a parse gives.
  const inCatalog = new Map(versions.map((r) => [r.version, r]));
  for (const r of records) {
    const theirs = inCatalog.get(r.version);
    if (!theirs) found.push(`it holds a record of ${r.version}, which the catalog does not list`);
    else if (!isDeepStrictEqual(theirs, r)) found.push(`its record of ${r.version} differs from the catalog's (${changedFields(r, theirs)})`);
  }
  const held = new Set(records.map((r) => r.version));
  const missing = expected.filter((r) => !held.has(r.version)).map((r) => r.version);
  if (missing.length > 0) found.push(`it lacks the record${missing.length === 1 ? "" : "s"} of ${missing.slice(0, 4).join(", ")}${missing.length > 4 ? "…" : ""} a publish renders from`);
  return found;
}

function changedFields(a: ReleaseRecord, b: ReleaseRecord): string {
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
  const changed = [...keys].filter((k) => !isDeepStrictEqual((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]));
  return changed.slice(0, 4).join(", ");
}
