import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import type { FeedRecord } from "../domain/appcast-selection.js";
import { isYanked } from "../domain/yank-state.js";
import { isPaused } from "../domain/rollout-state.js";
import { compareNewestFirst, parseCatalog } from "../domain/catalog.js";
import { isRelcastError } from "../core/errors.js";
import type { Catalog } from "../domain/record-schema.js";
import { APPCAST_KEY, CATALOG_KEY, versionedKey, zipFileName } from "../domain/release-layout.js";
import { buildOrderEntries, buildOrderViolations, describeViolation } from "../domain/build-order.js";
import type { ObjectStore } from "../store/object-store.js";
import { readAppcast } from "./appcast-reader.js";
import { checkArchive } from "./archive-check.js";
import { checkDeltas } from "./delta-check.js";
import { treeManifestProblems } from "./tree-manifest-check.js";
import { downloadObject, type HashTally } from "./download-object.js";
import { ReadMemo } from "./read-memo.js";
import { strictXmlProblem } from "./strict-xml.js";
import { checkFeedAgreement, type FeedExpectations } from "./feed-agreement.js";
import { expectedLatest } from "../domain/latest-choice.js";
import { checkLatest } from "./latest-check.js";
import { recordProblems } from "./record-check.js";
import { recordBidiProblems } from "./record-bidi.js";
import { recordInventory } from "./record-inventory.js";
import { catalogIndexFindings } from "./catalog-index-check.js";
import { headerProblems, recordingHeaders, type CacheControlSettings } from "./object-headers.js";
import { NOT_RUN, outcome, rowProblems, type ReleaseRow } from "./release-row.js";
import { bundleIdProblems, keyChangeProblems } from "./bundle-id-check.js";
import { runPool } from "./run-pool.js";
import { checkSite, type SiteFindings } from "./site-check.js";
import { feedSignatureProblems, type FeedSignatureExpectations } from "./feed-signature-check.js";
import type { SiteSettings } from "./public-feeds.js";

export interface VerifyOptions extends Partial<FeedExpectations> {
  publicKey?: Buffer | undefined;
  /** The config's values the site is rendered from; without them, read back from the appcast's channel. */
  site?: SiteSettings | undefined;
  /** Releases checked at once (downloads in flight). */
  concurrency?: number;
  /** The config's `appcast.signedFeed`: true, both appcasts must be signed. */
  signedFeed?: boolean | undefined;
  /** The Cache-Control values the config makes relcast write; undefined (no config): Cache-Control is not compared. */
  cacheControl?: CacheControlSettings | undefined;
  /** Name every object in the inventory findings (stray objects, unrecorded folders), not the first four: `--json`. */
  listAll?: boolean | undefined;
}

export interface VerifyReport {
  pluginId: string | undefined;
  releases: ReleaseRow[];
  /** Problems of the catalog, the appcast as a whole, and items no release owns. */
  feed: string[];
  latest: { version: string | undefined; problems: string[]; warnings: string[] };
  site: SiteFindings;
  /** Problems of the store itself: no catalog, links and special files inside it. */
  store: string[];
  /** What the store holds that nothing offers but that harms no release (objects no record names, an upload stopped before its disk image). */
  storeWarnings: string[];
  /** Objects checked (SHA-256 and size compared with a record) and their bytes; `sameFile` of them were a hard link to a file already hashed, not read again. */
  checked: { objects: number; bytes: number; sameFile: number };
  ok: boolean;
}

async function checkDmg(store: ObjectStore, record: Catalog["versions"][number], tally: HashTally): Promise<string[]> {
  const key = record.objectStore.objectPath;
  const got = await downloadObject(store, key, { tally });
  if (!got) return [`disk image ${key} is missing`];
  const found: string[] = [];
  if (got.sizeBytes !== record.sizeBytes) found.push(`disk image ${key} is ${got.sizeBytes} bytes; the record says ${record.sizeBytes}`);
  if (record.sha256 !== undefined && got.sha256 !== record.sha256) found.push(`disk image ${key} has SHA-256 ${got.sha256.slice(0, 12)}…, the record says ${record.sha256.slice(0, 12)}…`);
  return found;
}

function catalogProblems(catalog: Catalog, pluginId: string | undefined): string[] {
  const found: string[] = [];
  if (pluginId && catalog.pluginId !== pluginId) found.push(`the catalog is for plugin ${catalog.pluginId}, not ${pluginId}`);
  if (catalog.count !== catalog.versions.length) found.push(`the catalog says count ${catalog.count} but lists ${catalog.versions.length} releases`);
  const seen = new Set<string>();
  for (const r of catalog.versions) {
    if (seen.has(r.version)) found.push(`the catalog lists ${r.version} twice`);
    seen.add(r.version);
  }
  const sorted = [...catalog.versions].sort(compareNewestFirst);
  if (sorted.some((r, i) => r !== catalog.versions[i])) found.push("the catalog is not ordered newest first");
  return found;
}

/** The key installed copies check the feed with (--public-key, else the newest bundle's), and whether they demand a signed feed. */
function signatureExpectations(records: readonly Catalog["versions"][number][], bundles: Map<string, { publicEdKey?: string; requireSignedFeed?: boolean }>, options: VerifyOptions): FeedSignatureExpectations {
  const newest = records.map((r) => bundles.get(r.version)?.publicEdKey).find((k) => k !== undefined);
  const requiring = records.find((r) => bundles.get(r.version)?.requireSignedFeed);
  return {
    publicKey: options.publicKey ?? (newest ? Buffer.from(newest, "base64") : undefined),
    requiredBy: options.signedFeed ? "appcast.signedFeed is true in the config" : requiring ? `the bundle of ${requiring.version} has SURequireSignedFeed` : undefined,
  };
}

/** Turns an unexpected failure of one check into a problem of that check instead of aborting the run. */
async function guarded(what: string, fn: () => Promise<string[]>): Promise<string[]> {
  try {
    return await fn();
  } catch (err) {
    if (isRelcastError(err) && err.code === "E_STORE") throw err;
    return [`${what} could not be checked: ${(err as Error).message}`];
  }
}

/**
 * Downloads everything the catalog and the appcast point at and checks it
 * as an installed copy of the plugin would meet it. Never writes.
 */
export async function verifyStore(source: ObjectStore, options: VerifyOptions = {}): Promise<VerifyReport> {
  // Every HEAD and GET below leaves its headers here (no request of its own), compared at the end.
  const { store, seen } = recordingHeaders(source);
  const [catalogObj, appcastObj] = await Promise.all([store.get(CATALOG_KEY), store.get(APPCAST_KEY)]);
  const tally: HashTally = { objects: 0, bytes: 0, memo: new ReadMemo() };
  const checked = () => ({ objects: tally.objects, bytes: tally.bytes, sameFile: tally.sameFile ?? 0 });
  const storeProblems = (await store.strayEntries?.()) ?? [];
  const empty = { releases: [], latest: { version: undefined, problems: [], warnings: [] }, site: { problems: [], warnings: [] }, checked: checked() };
  if (!catalogObj) {
    // Nothing to verify is a failure: a mistyped --store must never read as "verified".
    const feed = [
      appcastObj
        ? `${APPCAST_KEY} exists but ${CATALOG_KEY} does not; run relcast rebuild`
        : `${store.uriFor(CATALOG_KEY)} does not exist: nothing is published in this store (check --store or the config's store)`,
    ];
    const inventory = await recordInventory(store, undefined, options.listAll === true);
    feed.push(...inventory.problems);
    return { pluginId: options.pluginId, ...empty, feed, store: storeProblems, storeWarnings: inventory.warnings, ok: false };
  }
  let catalog: Catalog;
  try {
    catalog = parseCatalog(catalogObj.body.toString("utf8"), store.uriFor(CATALOG_KEY));
  } catch (err) {
    return { pluginId: options.pluginId, ...empty, feed: [(err as Error).message], store: storeProblems, storeWarnings: [], ok: false };
  }
  const pluginId = options.pluginId ?? catalog.pluginId;
  const records = catalog.versions;
  const appcastText = appcastObj?.body.toString("utf8");
  const strict = appcastText !== undefined ? strictXmlProblem(appcastText, APPCAST_KEY) : undefined;
  const appcast = appcastText !== undefined ? readAppcast(appcastText) : undefined;
  const agreement = checkFeedAgreement(records, appcast, { pluginId, appUrl: options.appUrl, maxItemsPerChannel: options.maxItemsPerChannel, notesPages: options.notesPages });
  const feed = [...(strict ? [strict] : []), ...catalogProblems(catalog, options.pluginId), ...agreement.feed];
  if (!appcast && records.some((r) => r.autoupdate && !isYanked(r) && !isPaused(r))) feed.push(`${APPCAST_KEY} is missing`);
  const inventory = await recordInventory(store, catalog, options.listAll === true);
  feed.push(...inventory.problems);

  const workDir = await mkdtemp(path.join(os.tmpdir(), "relcast-verify-"));
  const byVersion = new Map(records.map((r) => [r.version, r]));
  const bundles = new Map<string, string | undefined>();
  const keyHistory: Array<{ version: string; build: number; publicEdKey: string | undefined; keyChangeAllowed: boolean }> = [];
  const feedKeys = new Map<string, { publicEdKey?: string; requireSignedFeed?: boolean }>();
  const keys = new Map<string, Buffer | undefined>();
  let releases: ReleaseRow[];
  try {
    releases = await runPool(records, options.concurrency ?? 4, async (record): Promise<ReleaseRow> => {
      const row: ReleaseRow = {
        version: record.version, channel: record.channel, build: record.autoupdate ? String(record.autoupdate.buildNumber) : "-", yanked: isYanked(record), paused: isPaused(record),
        checks: {
          record: outcome(await guarded("the record", async () => [...(await recordProblems(store, record)), ...recordBidiProblems(record)])),
          dmg: outcome(await guarded("the disk image", () => checkDmg(store, record, tally))),
          zip: NOT_RUN, signature: NOT_RUN, plist: NOT_RUN, zipRules: NOT_RUN, deltas: NOT_RUN,
          appcast: agreement.byVersion.get(record.version) ?? NOT_RUN, order: outcome(),
        },
      };
      if (record.autoupdate) {
        try {
          const found = await checkArchive(store, versionedKey(record.version, zipFileName(pluginId, record.version)), record as FeedRecord, options.publicKey, tally);
          Object.assign(row.checks, { zip: found.zip, signature: found.signature, plist: found.plist, zipRules: found.rules });
          bundles.set(record.version, found.bundle?.bundleIdentifier);
          keyHistory.push({ version: record.version, build: record.autoupdate.buildNumber, publicEdKey: found.bundle?.publicEdKey, keyChangeAllowed: record.autoupdate.keyChangeAllowed === true });
          if (found.bundle) feedKeys.set(record.version, found.bundle);
          const key32 = options.publicKey ?? (found.bundle?.publicEdKey ? Buffer.from(found.bundle.publicEdKey, "base64") : undefined);
          keys.set(record.version, key32);
          const deltaProblems = record.autoupdate.deltas?.length ? await guarded("the delta updates", () => checkDeltas(store, record, byVersion, pluginId, key32, workDir, tally)) : undefined;
          // The tree manifest later deltas are made from; releases published before manifests have none.
          const manifestProblems = await guarded("the tree manifest", () => treeManifestProblems(store, pluginId, record as FeedRecord));
          if (deltaProblems || manifestProblems.length > 0) row.checks.deltas = outcome([...(deltaProblems ?? []), ...manifestProblems]);
        } catch (err) {
          if (isRelcastError(err) && err.code === "E_STORE") throw err;
          row.checks.zip = outcome([`the update zip could not be checked: ${(err as Error).message}`]);
        }
      }
      return row;
    });
  } finally {
    await rm(workDir, { recursive: true, force: true });
  }
  const rowOf = new Map(releases.map((r) => [r.version, r]));
  for (const v of buildOrderViolations(buildOrderEntries(records))) {
    const line = `build order: ${describeViolation(v)}`;
    for (const version of [v.lower.version, v.higher.version]) {
      const order = rowOf.get(version)!.checks.order;
      rowOf.get(version)!.checks.order = outcome([...order.problems, line]);
    }
  }
  for (const [version, problem] of [...bundleIdProblems(bundles), ...keyChangeProblems(keyHistory)]) rowOf.get(version)!.checks.plist = outcome([...rowOf.get(version)!.checks.plist.problems, problem]);
  const expected = signatureExpectations(records, feedKeys, options);
  feed.push(...(await guarded("the feed signatures", () => feedSignatureProblems(store, pluginId, records, expected))));
  // The catalog index is checked with the key the feeds are: a publish trusts it only when signed with the release key.
  const index = await catalogIndexFindings(store, catalog, catalogObj.body, catalogObj.meta.etag, expected.publicKey);
  feed.push(...index.problems);
  inventory.warnings.push(...index.warnings);
  const latest = { version: expectedLatest(records)?.version, ...(await checkLatest(store, pluginId, records, tally)) };
  const site = await checkSite(store, pluginId, records, {
    catalog: { bytes: catalogObj.body, parsed: catalog },
    appcast: appcastObj ? { bytes: appcastObj.body, channel: appcast?.channel } : undefined,
    settings: options.site, appUrl: options.appUrl, maxItemsPerChannel: options.maxItemsPerChannel, keyOf: (version) => options.publicKey ?? keys.get(version), listAll: options.listAll,
  }, tally);
  storeProblems.push(...headerProblems(source, seen, options.cacheControl));
  const ok = feed.length === 0 && storeProblems.length === 0 && latest.problems.length === 0 && site.problems.length === 0 && releases.every((r) => rowProblems(r).length === 0);
  return { pluginId, releases, feed, latest, site, store: storeProblems, storeWarnings: inventory.warnings, checked: checked(), ok };
}
