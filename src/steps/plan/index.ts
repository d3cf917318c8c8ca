import semver from "semver";
import { RelcastError } from "../../core/errors.js";
import { buildRecord } from "../../domain/build-record.js";
import type { LocalArtifact } from "../../domain/build-record.js";
import { need, type ReleaseContext } from "../release-context.js";
import { downloadCopies } from "../../site/public-site.js";
import {
  APPCAST_KEY, CATALOG_KEY, CHANGELOG_KEY, INDEX_KEY, publicAppcastKey, publicCatalogKey, dmgFileName, LATEST_PREFIX, publicDownloadUrl, recordKey, versionedKey, zipFileName,
} from "../../domain/release-layout.js";
import type { PlannedWrite, ReleasePlan } from "../../domain/release-plan.js";
import { isPrerelease } from "../../domain/version-input.js";
import type { Step } from "../step.js";
import { APPCAST_CONTENT_TYPE, CACHE_IMMUTABLE, CACHE_NO_CACHE, contentTypeFor } from "../../store/content-types.js";
import { storedDigest } from "../../store/stored-digest.js";
import { latestVersionsPresent, yankedAmong } from "../../catalog/latest-objects.js";

function conflict(key: string, version: string): RelcastError {
  return new RelcastError(
    "E_CONFLICT",
    `${key} already exists with different bytes; version ${version} was published from another build`,
    "published versions are immutable: bump the version and publish again",
  );
}

async function planArtifact(ctx: ReleaseContext, key: string, artifact: LocalArtifact, cache: string): Promise<PlannedWrite> {
  const base = { key, sizeBytes: artifact.sizeBytes, contentType: contentTypeFor(key), cacheControl: cache, source: { file: artifact.file } };
  const head = await ctx.store.head(key);
  if (!head) return { ...base, action: "create" };
  if (head.size !== artifact.sizeBytes) throw conflict(key, ctx.inputs.version);
  const stored = await storedDigest(ctx.store, key);
  if (stored?.sha256 !== artifact.sha256) throw conflict(key, ctx.inputs.version);
  return { ...base, action: "skip-identical" };
}

async function latestObjectsComplete(ctx: ReleaseContext, versionedKeys: string[]): Promise<boolean> {
  for (const key of versionedKeys) {
    const [source, copy] = await Promise.all([ctx.store.head(key), ctx.store.head(`${LATEST_PREFIX}${key.split("/").pop()}`)]);
    if (!source || !copy || source.size !== copy.size) return false;
  }
  return true;
}

/** Computes the record and every write, reading the store but writing nothing. */
export const planStep: Step = {
  name: "plan",
  async run(ctx) {
    const { config, inputs } = ctx;
    const dmg = need(ctx.dmg, "dmg");
    const zip = need(ctx.zip, "zip");
    const existing = ctx.existingRecord;
    if (existing?.autoupdate?.sha256 !== undefined && existing.autoupdate.sha256 !== zip.sha256) {
      throw new RelcastError(
        "E_CONFLICT",
        `version ${inputs.version} is already published with a different bundle (zip sha256 differs)`,
        "published versions are immutable: bump the version and publish again",
      );
    }
    const publishedAt = existing ? new Date(existing.publishedAt._seconds * 1000 + Math.floor(existing.publishedAt._nanoseconds / 1e6)) : inputs.publishedAt ?? new Date();
    const record = existing ?? buildRecord({
      config, store: ctx.store, version: inputs.version, summary: inputs.summary ?? need(ctx.notes, "notes").firstText,
      notes: need(ctx.notes, "notes"), dmg, zip, buildNumber: need(ctx.buildNumber, "build number"),
      edSignature: need(ctx.edSignature, "signature"), minimumSystemVersion: ctx.bundle?.minimumSystemVersion,
      autoupdateOptions: ctx.autoupdateOptions, publishedAt,
      deltas: (ctx.deltas ?? []).map((d) => ({
        fromVersion: d.fromVersion, fromBuild: d.fromBuild, url: publicDownloadUrl(config.appUrl, d.fileName), sizeBytes: d.sizeBytes, sha256: d.sha256, edSignature: d.edSignature,
      })),
    });
    const immutable = config.cacheControl?.immutable ?? CACHE_IMMUTABLE;
    const mutable = config.cacheControl?.mutable ?? CACHE_NO_CACHE;
    const dmgKey = versionedKey(inputs.version, dmgFileName(config.pluginId, inputs.version));
    const zipKey = versionedKey(inputs.version, zipFileName(config.pluginId, inputs.version));
    const writes: PlannedWrite[] = [
      await planArtifact(ctx, dmgKey, dmg, immutable),
      await planArtifact(ctx, zipKey, zip, immutable),
    ];
    const recordText = JSON.stringify(record, null, 2) + "\n";
    writes.push({
      key: recordKey(inputs.version), action: existing ? "skip-identical" : "create", sizeBytes: Buffer.byteLength(recordText),
      contentType: "application/json", cacheControl: immutable, source: { text: recordText },
    });
    // Delta updates: created once beside the zip, before the record and the feeds that name them.
    for (const delta of ctx.deltas ?? []) writes.push(await planArtifact(ctx, versionedKey(inputs.version, delta.fileName), delta, immutable));
    const present = await latestVersionsPresent(ctx.store, config.pluginId);
    const yanked = await yankedAmong(ctx.store, [...new Set([...present, inputs.version])]);
    const live = present.filter((v) => !yanked.has(v));
    const highest = live.length > 0 ? semver.rsort([...live])[0] : undefined;
    let latest: ReleasePlan["latest"];
    if (yanked.has(inputs.version)) latest = { update: false, reason: `unchanged: ${inputs.version} is yanked` };
    else if (isPrerelease(inputs.version)) latest = { update: false, reason: `unchanged: ${inputs.version} is a prerelease` };
    else if (highest && semver.gt(highest, inputs.version)) latest = { update: false, reason: `unchanged: ${highest} is higher than ${inputs.version}` };
    else if (highest === inputs.version && (await latestObjectsComplete(ctx, [dmgKey, zipKey]))) latest = { update: false, reason: `unchanged: ${inputs.version} is already latest` };
    else latest = { update: true, reason: `${LATEST_PREFIX}${config.pluginId}-${inputs.version}.dmg|.zip${highest && highest !== inputs.version ? ` (replaces ${highest})` : ""}` };
    if (latest.update) {
      for (const key of [dmgKey, zipKey]) {
        writes.push({ key: `${LATEST_PREFIX}${key.split("/").pop()}`, action: "copy", copyFrom: key, contentType: contentTypeFor(key), cacheControl: mutable });
      }
    }
    for (const copy of downloadCopies(record)) {
      writes.push({ key: copy.to, action: "public-copy", copyFrom: copy.from, contentType: contentTypeFor(copy.to), cacheControl: immutable });
    }
    writes.push({ key: CATALOG_KEY, action: "update-cas", contentType: "application/json", cacheControl: mutable });
    writes.push({ key: APPCAST_KEY, action: "update-cas", contentType: APPCAST_CONTENT_TYPE, cacheControl: mutable });
    for (const key of [publicCatalogKey(config.pluginId), publicAppcastKey(config.pluginId), INDEX_KEY, CHANGELOG_KEY]) {
      writes.push({ key, action: "site-sync", contentType: key.endsWith(".xml") ? APPCAST_CONTENT_TYPE : contentTypeFor(key), cacheControl: mutable });
    }
    const own = writes.slice(0, 3 + (ctx.deltas?.length ?? 0));
    const allStored = own.every((w) => w.action === "skip-identical");
    const anyStored = own.some((w) => w.action === "skip-identical");
    ctx.record = record;
    ctx.plan = { version: inputs.version, mode: allStored ? "noop" : anyStored ? "resume" : "new", record, writes, latest };
  },
};
