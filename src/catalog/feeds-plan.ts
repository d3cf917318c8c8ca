import { createHash, randomBytes } from "node:crypto";
import { read } from "node:fs";
import path from "node:path";
import { promisify } from "node:util";
import type { RelcastConfig } from "../config/schema.js";
import { PreconditionFailedError, RelcastError } from "../core/errors.js";
import { appcastLimit, appcastOptionsFor, renderAppcast } from "../domain/appcast.js";
import { buildCatalog, firstEntryOffset, mergeIntoCatalog, parseCatalog, serializeCatalog } from "../domain/catalog.js";
import type { Catalog, ReleaseRecord, RolloutMarker, YankMarker } from "../domain/record-schema.js";
import { APPCAST_KEY, CATALOG_KEY } from "../domain/release-layout.js";
import { ETAG_PLACEHOLDER, type ContentSource, type Precondition, type PutWrite } from "../domain/release-plan.js";
import { withYankState } from "../domain/yank-state.js";
import { withRolloutState } from "../domain/rollout-state.js";
import { appcastRecords } from "../domain/appcast-selection.js";
import { hostedNotesPages, type NotesPage } from "../domain/notes/notes-page.js";
import { signFeed } from "../sparkle/feed-signature.js";
import { feedSigningKey, indexTrustOf, notesPageSignatures, signingReason, type FeedSigning } from "./feed-signing.js";
import { signCatalogIndex } from "./catalog-index-signature.js";
import { APPCAST_CONTENT_TYPE, CACHE_NO_CACHE } from "../store/content-types.js";
import type { ObjectStore } from "../store/object-store.js";
import type { CatalogView } from "./catalog-entry.js";
import { CATALOG_INDEX_KEY, indexedSha256, isIndexed, serializeCatalogIndex } from "./catalog-index.js";
import { goesFirst, readCatalogView, viewOfCatalog, viewWithNewest } from "./catalog-view.js";
import { writeCatalog, writeWithNewest } from "./catalog-write.js";
import { readAllRecords } from "./stored-records.js";

/** What changes in the feeds: a published record, a yank state, a rollout state, or every record (rebuild). */
export type FeedChange =
  | { kind: "add"; record: ReleaseRecord }
  | { kind: "yank-state"; version: string; marker: YankMarker | undefined }
  | { kind: "rollout-state"; version: string; marker: RolloutMarker | undefined }
  | { kind: "replace"; records: readonly ReleaseRecord[] };

/** The `feeds` writes of a plan, and the feeds they leave behind (the site is rendered from these). */
export interface FeedsPlan {
  /** Catalog, appcast and catalog index, in the order they are written. */
  writes: PutWrite[];
  /** The catalog after the change (the records pages and appcast are rendered from). */
  view: CatalogView;
  catalog: { source: ContentSource; sizeBytes: number; sha256: string };
  appcast: Buffer;
  /** The release-notes pages relcast hosts for the appcast's items (the site writes them). */
  pages: NotesPage[];
  /** Why the appcast is signed; undefined: it is not. */
  signedBecause: string | undefined;
}

const sha256Of = (bytes: Buffer) => createHash("sha256").update(bytes).digest("hex");

function notPublished(store: ObjectStore): RelcastError {
  return new RelcastError("E_VERSION", `nothing is published in ${store.uriFor(CATALOG_KEY)}`, "check --store / the config's store");
}

/**
 * A view read from the catalog index names the SHA-256 of the catalog it was
 * made from; the bytes a plan reads must be those. If not, the index was
 * written for other bytes or edited with its digest recomputed, and this
 * publish may already have been checked against its rows (build order):
 * stop before anything is published from it.
 */
function checkIndexAgainst(store: ObjectStore, view: CatalogView, sha256: string): void {
  const named = indexedSha256(view);
  if (named === undefined || named === sha256) return;
  throw new RelcastError(
    "E_CATALOG",
    `${store.uriFor(CATALOG_INDEX_KEY)} names a catalog with SHA-256 ${named.slice(0, 12)}…, but ${store.uriFor(CATALOG_KEY)} has ${sha256.slice(0, 12)}…: the index was edited or written for other bytes, so nothing was published from it`,
    "the index is only a cache: run relcast rebuild (or delete releases/catalog-index.json), run relcast verify, then re-run this command",
  );
}

/** Passes `chunks` on unchanged, hashing them; `done()` gives the SHA-256 of all that passed. */
function hashing(chunks: AsyncIterable<Buffer>): { chunks: AsyncIterable<Buffer>; done: () => string } {
  const hash = createHash("sha256");
  return {
    chunks: (async function* () {
      for await (const chunk of chunks) {
        hash.update(chunk);
        yield chunk;
      }
    })(),
    done: () => hash.digest("hex"),
  };
}

const readAt = promisify(read);

/** A descriptor's bytes from the start, in 1 MiB chunks of one reused buffer (each valid until the next is asked for). */
async function* readInPlace(fd: number): AsyncIterable<Buffer> {
  const buffer = Buffer.allocUnsafeSlow(1 << 20);
  for (let at = 0; ; ) {
    const { bytesRead: n } = await readAt(fd, buffer, 0, buffer.length, at);
    if (n === 0) return;
    at += n;
    yield buffer.subarray(0, n);
  }
}

/** A new name every time: the file is handed over to the store (maybe as a hard link), so it is never rewritten. */
function newCatalogFile(workDir: string, attempt: number): string {
  return path.join(workDir, `catalog-${attempt}-${randomBytes(6).toString("hex")}.json`);
}

/**
 * The ETag a view names: a catalog this plan rewrites gets the placeholder
 * (its write stamps the new ETag into the index); an unchanged one keeps the
 * ETag it has now, since its index is written as plain bytes and nothing
 * stamps it (an index naming the placeholder is one no run ever trusts).
 */
function etagOfView(changed: boolean, etagNow: string | undefined): string {
  if (changed) return ETAG_PLACEHOLDER;
  if (etagNow === undefined) throw new Error("an unchanged catalog has an ETag");
  return etagNow;
}

/** The view, if `record` goes in front of every entry and the view knows where its first entry starts. */
function spliceAt(view: CatalogView, record: ReleaseRecord): (CatalogView & { firstOffset: number }) | undefined {
  const { firstOffset } = view;
  return firstOffset !== undefined && goesFirst(view, record) ? { ...view, firstOffset } : undefined;
}

/**
 * The catalog after a change, given its bytes now (undefined: no catalog yet).
 * A catalog created by a publish lists every valid record the store holds
 * besides its own: those of publishes racing this one (each writes its record
 * before the catalog), or of releases whose catalog was lost. Leaving them
 * out would hide them from installed copies (preflight checked against them).
 */
async function changedCatalog(store: ObjectStore, config: RelcastConfig, change: FeedChange, current: Buffer | undefined): Promise<Catalog> {
  if (change.kind === "replace") return buildCatalog(config.pluginId, change.records);
  if (!current) {
    if (change.kind !== "add") throw notPublished(store);
    const stored = (await readAllRecords(store, config.pluginId)).records.filter((r) => r.version !== change.record.version);
    return buildCatalog(config.pluginId, [...stored, change.record]);
  }
  const catalog = parseCatalog(current.toString("utf8"), store.uriFor(CATALOG_KEY));
  if (change.kind === "add") return mergeIntoCatalog(catalog, catalog.pluginId, change.record);
  const changed = (r: ReleaseRecord) => (change.kind === "yank-state" ? withYankState(r, change.marker) : withRolloutState(r, change.marker));
  const versions = catalog.versions.map((r) => (r.version === change.version ? changed(r) : r));
  return { ...catalog, versions };
}

/**
 * Plans the `feeds` step: the new catalog (for a new newest release, its
 * record written in front of the catalog's bytes into a temp file in
 * `workDir`; otherwise parsed and written in full), the appcast rendered from it, and the
 * catalog index. The appcast is read before the catalog, and both writes are
 * conditional on the ETags read here, so whoever writes last rendered from a
 * catalog holding every earlier writer's change; a lost race is re-planned
 * by calling this again. A signed appcast (see feed-signing.ts) ends with
 * its signature block here, so the plan holds the bytes a publish writes.
 * Reads the store, writes only `workDir`.
 */
export async function planFeeds(store: ObjectStore, config: RelcastConfig, change: FeedChange, workDir: string, attempt = 1, signing: FeedSigning = {}): Promise<FeedsPlan> {
  const limit = appcastLimit(config);
  const cacheControl = config.cacheControl?.mutable ?? CACHE_NO_CACHE;
  const where = store.uriFor(CATALOG_KEY);
  const appcastNow = await store.get(APPCAST_KEY);
  // A rebuild replaces the catalog whatever it holds (even invalid JSON): it needs only its ETag, never its contents.
  const viewNow = change.kind === "replace" ? undefined : await readCatalogView(store, limit, indexTrustOf(signing));
  const etagNow = change.kind === "replace" ? (await store.head(CATALOG_KEY))?.etag : viewNow?.etag;
  const precondition: Precondition = { kind: "if-match", etag: etagNow ?? null };

  let catalog: FeedsPlan["catalog"];
  let view: CatalogView;
  let changed: boolean;
  // The usual publish: the new release is the newest. It is written in front of the catalog's bytes, which are copied as they are.
  const splice = change.kind === "add" && viewNow ? spliceAt(viewNow, change.record) : undefined;
  if (change.kind === "add" && splice) {
    // Read in place where the store can (one reused buffer, not 20 MB of chunks to collect for a 10,000-release catalog).
    const opened = store.openRead ? await store.openRead(CATALOG_KEY) : undefined;
    const got = opened ? undefined : await store.getStream(CATALOG_KEY);
    if ((opened ?? got)?.meta.etag !== splice.etag) {
      await opened?.close();
      got?.stream.destroy();
      throw new PreconditionFailedError(CATALOG_KEY, "if-match");
    }
    const file = newCatalogFile(workDir, attempt);
    let result;
    try {
      // Every byte of the catalog passes here anyway: hashing them costs a few ms for 20 MB, parsing them would cost the index's gain.
      const read = hashing(opened ? readInPlace(opened.fd) : (got!.stream as AsyncIterable<Buffer>));
      result = await writeWithNewest(where, read.chunks, splice, change.record, file, { reusedChunks: opened !== undefined });
      checkIndexAgainst(store, viewNow!, read.done());
    } finally {
      await opened?.close();
      got?.stream.destroy();
    }
    changed = true;
    view = viewWithNewest(splice, change.record, ETAG_PLACEHOLDER, limit, result.firstOffset);
    catalog = { source: { kind: "file", file, handOver: true }, sizeBytes: result.sizeBytes, sha256: result.sha256 };
  } else {
    // A first release, a backport or re-publish, a yank or a rebuild: the whole catalog, parsed and written in full.
    const current = etagNow !== undefined ? await store.get(CATALOG_KEY) : undefined;
    if (etagNow !== undefined && current?.meta.etag !== etagNow) throw new PreconditionFailedError(CATALOG_KEY, "if-match");
    if (current && viewNow) checkIndexAgainst(store, viewNow, sha256Of(current.body));
    const next = await changedCatalog(store, config, change, current?.body);
    if (change.kind === "add") {
      // A record at a time into a file: the new catalog is not held as a 20 MB string and a copy of it.
      const file = newCatalogFile(workDir, attempt);
      const result = await writeCatalog(next, file);
      changed = !current || current.body.length !== result.sizeBytes || sha256Of(current.body) !== result.sha256;
      view = changed || !viewNow ? viewOfCatalog(next, etagOfView(changed, etagNow), limit, result.firstOffset) : viewNow;
      catalog = { source: { kind: "file", file, handOver: true }, sizeBytes: result.sizeBytes, sha256: result.sha256 };
    } else {
      const bytes = Buffer.from(serializeCatalog(next));
      changed = !current?.body.equals(bytes);
      view = changed || !viewNow ? viewOfCatalog(next, etagOfView(changed, etagNow), limit, firstEntryOffset(bytes, next)) : viewNow;
      catalog = { source: { kind: "bytes", bytes }, sizeBytes: bytes.length, sha256: sha256Of(bytes) };
    }
  }

  // Signed (Sparkle 2.9): the signature block is part of the planned bytes, and so are the notes pages' signatures.
  const pages = hostedNotesPages(appcastRecords(view.records, limit));
  const signedBecause = signingReason(config, signing, appcastNow?.body);
  const key = signedBecause ? await feedSigningKey(signedBecause, signing, appcastNow?.body) : undefined;
  const rendered = Buffer.from(renderAppcast(view.records, appcastOptionsFor(config), key ? await notesPageSignatures(pages, key) : undefined));
  const appcast = key ? await signFeed(rendered, key) : rendered;
  const writes: PutWrite[] = [
    {
      step: "feeds", op: "put", key: CATALOG_KEY, ...catalog, contentType: "application/json", cacheControl, precondition,
      needed: changed, why: changed ? (viewNow ? `${viewNow.count} → ${view.count} releases` : etagNow !== undefined ? `rebuilt: ${view.count} releases` : "first release") : "unchanged",
    },
    {
      step: "feeds", op: "put", key: APPCAST_KEY, source: { kind: "bytes", bytes: appcast }, sizeBytes: appcast.length, sha256: sha256Of(appcast),
      contentType: APPCAST_CONTENT_TYPE, cacheControl,
      precondition: { kind: "if-match", etag: appcastNow?.meta.etag ?? null },
      needed: !appcastNow?.body.equals(appcast), why: appcastNow?.body.equals(appcast) ? "unchanged" : "rendered from the new catalog",
    },
  ];
  // The index names the catalog's ETag (a new catalog's is known only once it is written) and is signed with the release key
  // after it is stamped in. A run without the key writes none: no run would trust it (an older index names another ETag).
  const indexKey = signing.key;
  const indexText = serializeCatalogIndex(view, limit, catalog.sha256, indexKey?.publicKeyBase64 ?? "");
  const seal = indexKey ? (text: string) => signCatalogIndex(text, indexKey) : undefined;
  const signedNow = !changed && indexKey ? await signCatalogIndex(indexText, indexKey) : indexText;
  writes.push({
    step: "feeds", op: "put", key: CATALOG_INDEX_KEY,
    source: changed ? { kind: "stamped", template: indexText, etagOf: CATALOG_KEY, seal } : { kind: "bytes", bytes: Buffer.from(signedNow) },
    // The signature's 88 base64 characters are part of the size (a stamped ETag may differ in length from the placeholder anyway).
    sizeBytes: Buffer.byteLength(indexText) + (indexKey ? 88 : 0), contentType: "application/json", cacheControl, precondition: { kind: "overwrite" },
    needed: indexKey !== undefined && (changed || !isIndexed(view)),
    why: !indexKey ? "not written: no signing key to sign it with" : changed ? "index of the new catalog" : isIndexed(view) ? "unchanged" : "index of the current catalog",
  });
  return { writes, view, catalog, appcast, pages, signedBecause };
}
