import { createHash } from "node:crypto";
import { RELEASES_PREFIX } from "../domain/release-layout.js";
import { releaseRecordSchema, type ReleaseRecord } from "../domain/record-schema.js";
import { CatalogEntries, type CatalogView } from "./catalog-entry.js";

/**
 * `releases/catalog-index.json`: the catalog view of the catalog with a given
 * ETag (one short row per release plus the few full records a publish writes
 * from). A publish reads it instead of parsing a catalog of thousands of
 * releases; it is only trusted while the catalog still has that ETag, so a
 * stale or lost index costs one full read of the catalog, never a wrong answer.
 *
 * An ETag names the catalog's bytes, not the index's, so the head also
 * carries the catalog's SHA-256 and a SHA-256 `digest` over everything else
 * the index holds: an index edited by hand or by another tool (a row's
 * build changed, a record changed) no longer matches its digest and is not
 * used (the catalog is read in full instead), and a publish that reads the
 * catalog's bytes anyway checks them against `catalogSha256` (feeds-plan.ts).
 * The digest has no key, so the head also names the public key of the run
 * that wrote the index and ends in an Ed25519 `signature` over the whole
 * file (catalog-index-signature.ts): a run trusts the index only when its
 * own release key signed it, so whoever can write the store but does not
 * hold the key cannot make a publish skip a check, hide a release or
 * reorder the feeds with a forged index. `relcast verify` checks the
 * signature and compares every row and record with the catalog itself
 * (verify/catalog-index-check.ts).
 */
export const CATALOG_INDEX_KEY = `${RELEASES_PREFIX}catalog-index.json`;
const FORMAT = 4;

/** Views known to be in the store's index already (read from it, or written to it). */
const indexed = new WeakSet<CatalogView>();

export function isIndexed(view: CatalogView): boolean {
  return indexed.has(view);
}

interface IndexHead {
  format: number;
  catalogEtag: string;
  catalogSha256: string;
  limit: number | null;
  pluginId: string;
  count: number;
  firstOffset: number | null;
  records: unknown[];
  digest: string;
  /** Base64 of the public key whose private key signed the index (says which key; trusted only through the signature). */
  publicKey: string;
  /** Base64 Ed25519 signature over the file with this value empty; always the head's last field. */
  signature: string;
}

/** SHA-256 over what the index says of the catalog (all but the ETag, stamped in after the catalog is written). */
function digestOf(head: Omit<IndexHead, "format" | "catalogEtag" | "digest" | "publicKey" | "signature">, rows: string): string {
  const { catalogSha256, limit, pluginId, count, firstOffset, records } = head;
  return createHash("sha256").update(JSON.stringify([FORMAT, catalogSha256, limit, pluginId, count, firstOffset, records])).update("\n").update(rows).digest("hex");
}

/**
 * One JSON object: the head on its first line, ending in `"entries":[`,
 * then one entry row a line (see {@link CatalogEntries}), then `]}`. So a
 * publish reads the head with JSON.parse and keeps the rows as text.
 */
export function serializeCatalogIndex(view: CatalogView, limit: number | undefined, catalogSha256: string, publicKeyBase64: string): string {
  const rows = view.entries.text;
  const facts = { catalogSha256, limit: limit ?? null, pluginId: view.pluginId, count: view.count, firstOffset: view.firstOffset ?? null, records: view.records };
  // Unsigned until signCatalogIndex fills in the signature (after the catalog's ETag is stamped in).
  const head: IndexHead = { format: FORMAT, catalogEtag: view.etag, ...facts, digest: digestOf(facts, rows), publicKey: publicKeyBase64, signature: "" };
  return `${JSON.stringify(head).slice(0, -1)},"entries":[\n${rows}${rows === "" ? "" : "\n"}]}\n`;
}

const isInt = (v: unknown): v is number => typeof v === "number" && Number.isInteger(v);
const ENTRIES = ',"entries":[';
const END = "]}\n";

/** An index file as it reads: its head and its view, or why it cannot be used at all. */
export type ReadIndex =
  | { ok: true; catalogEtag: string; catalogSha256: string; limit: number | undefined; view: IndexedView; seal: IndexSeal }
  | { ok: false; why: string; catalogEtag?: string | undefined; limit?: number | undefined };

/** What the signature of an index covers and says (checked by catalog-index-signature.ts). */
export interface IndexSeal {
  publicKey: string;
  signature: string;
  /** The file as it was signed: its bytes with the signature's value empty. */
  signed: string;
}

/** A view read from the index: it also names the SHA-256 of the catalog it was made from. */
export type IndexedView = CatalogView & { catalogSha256: string };

const SHA256 = /^[0-9a-f]{64}$/;

/** Reads an index file whatever catalog it names, signed or not (a run trusts it through catalog-index-signature.ts; verify compares it with the catalog). */
export function readIndexText(text: string): ReadIndex {
  const firstLine = text.indexOf("\n");
  if (firstLine === -1 || !text.endsWith(END) || !text.slice(0, firstLine).endsWith(ENTRIES)) return { ok: false, why: "it is not laid out as relcast writes it" };
  let file: Partial<IndexHead>;
  try {
    file = JSON.parse(`${text.slice(0, firstLine - ENTRIES.length)}}`) as Partial<IndexHead>;
  } catch {
    return { ok: false, why: "its first line is not JSON" };
  }
  const limit = file.limit;
  // Named even when the index is unusable: a run tells a stale index (another catalog) from one it had to refuse.
  const names = { catalogEtag: typeof file.catalogEtag === "string" ? file.catalogEtag : undefined, limit: isInt(limit) ? limit : undefined };
  if (file.format !== FORMAT) {
    const older = isInt(file.format) && file.format < FORMAT;
    return { ok: false, why: older ? `it is unsigned (format ${file.format}, written by an older relcast)` : `its format is ${JSON.stringify(file.format)}, not ${FORMAT}`, ...names };
  }
  if (typeof file.catalogEtag !== "string" || typeof file.catalogSha256 !== "string" || !SHA256.test(file.catalogSha256) || typeof file.digest !== "string"
    || typeof file.pluginId !== "string" || !isInt(file.count) || !Array.isArray(file.records) || !(limit === null || isInt(limit))
    || !(file.firstOffset === null || isInt(file.firstOffset)) || typeof file.publicKey !== "string" || typeof file.signature !== "string") {
    return { ok: false, why: "its head lacks a field or has one of the wrong type", ...names };
  }
  const sealed = `,"signature":${JSON.stringify(file.signature)}${ENTRIES}`;
  if (!text.slice(0, firstLine).endsWith(sealed)) return { ok: false, why: "its signature is not the last field of its head", ...names };
  const seal: IndexSeal = { publicKey: file.publicKey, signature: file.signature, signed: `${text.slice(0, firstLine - sealed.length)},"signature":""${ENTRIES}${text.slice(firstLine)}` };
  const rows = text.slice(firstLine + 1, -END.length);
  if (rows !== "" && !rows.endsWith("\n")) return { ok: false, why: "its rows are not laid out as relcast writes them", ...names };
  const facts = { catalogSha256: file.catalogSha256, limit, pluginId: file.pluginId, count: file.count, firstOffset: file.firstOffset, records: file.records };
  if (digestOf(facts, rows.slice(0, -1)) !== file.digest) return { ok: false, why: "its digest does not match what it holds (edited after relcast wrote it)", ...names };
  const entries = CatalogEntries.fromText(rows.slice(0, -1));
  if (!entries) return { ok: false, why: "a row is not a valid entry", ...names };
  if (entries.length !== file.count) return { ok: false, why: `it says count ${file.count} but has ${entries.length} rows`, ...names };
  const records: ReleaseRecord[] = [];
  for (const r of file.records) {
    const parsed = releaseRecordSchema.safeParse(r);
    if (!parsed.success) return { ok: false, why: "a record it holds is not a valid release record", ...names };
    records.push(parsed.data);
  }
  const view: IndexedView = {
    etag: file.catalogEtag, catalogSha256: file.catalogSha256, pluginId: file.pluginId, count: file.count, entries, records, firstOffset: file.firstOffset ?? undefined,
  };
  return { ok: true, catalogEtag: file.catalogEtag, catalogSha256: file.catalogSha256, limit: limit ?? undefined, view, seal };
}

/** The catalog SHA-256 a view read from the index names; undefined for a view made from the catalog itself. */
export function indexedSha256(view: CatalogView): string | undefined {
  return indexed.has(view) ? (view as IndexedView).catalogSha256 : undefined;
}

/** Marks a view as the one the store's index holds (read from it and trusted). */
export function markIndexed(view: IndexedView): IndexedView {
  indexed.add(view);
  return view;
}
