import path from "node:path";
import { createHash } from "node:crypto";
import { RelcastError } from "../../core/errors.js";
import { planLatest } from "../../catalog/latest-plan.js";
import { buildRecord, type LocalArtifact } from "../../domain/build-record.js";
import { recordDifferences } from "../../domain/record-diff.js";
import { releaseRecordSchema } from "../../domain/record-schema.js";
import { describeZodIssues } from "../../core/zod-message.js";
import { dmgFileName, publicDownloadUrl, recordKey, treeManifestKey, versionedKey, zipFileName } from "../../domain/release-layout.js";
import type { PlannedWrite, PutWrite } from "../../domain/release-plan.js";
import { planDownloads, planFeedsAndSite } from "../../site/site-plan.js";
import { CACHE_IMMUTABLE, CACHE_NO_CACHE, contentTypeFor } from "../../store/content-types.js";
import { storedDigest } from "../../store/stored-digest.js";
import { keysBeforeFeeds } from "../../site/feeds-apply.js";
import { hostedNotesPageKey } from "../../domain/notes/notes-page.js";
import { need, type ReleaseContext } from "../release-context.js";
import type { Step } from "../step.js";

function conflict(key: string, version: string): RelcastError {
  return new RelcastError(
    "E_CONFLICT",
    `${key} already exists with different bytes; version ${version} was published from another build`,
    "published versions are immutable: bump the version and publish again",
  );
}

/** A versioned artifact: created once; already there with the same bytes is skipped, with other bytes refused. */
async function planArtifact(ctx: ReleaseContext, key: string, artifact: LocalArtifact, cacheControl: string): Promise<PutWrite> {
  const write: PutWrite = {
    step: "upload", op: "put", key, source: { kind: "file", file: artifact.file, handOver: artifact.file.startsWith(ctx.workDir + path.sep) }, sizeBytes: artifact.sizeBytes, sha256: artifact.sha256,
    contentType: contentTypeFor(key), cacheControl, precondition: { kind: "create-only" }, needed: true, why: "new",
  };
  const head = await ctx.store.head(key);
  if (!head) return write;
  if (head.size !== artifact.sizeBytes) throw conflict(key, ctx.inputs.version);
  const stored = await storedDigest(ctx.store, key);
  if (stored?.sha256 !== artifact.sha256) throw conflict(key, ctx.inputs.version);
  return { ...write, needed: false, why: "already there with the same bytes" };
}

/**
 * Computes the record and every write of the release, reading the store
 * but writing nothing (the merged catalog goes to the work folder): the
 * artifacts, the record, the download copies, `releases/latest/`, the feeds
 * and the public site, each with its bytes or source, headers and
 * precondition. The apply steps carry this out; `--dry-run` prints it.
 */
export const planStep: Step = {
  name: "plan",
  async run(ctx) {
    const { config, inputs } = ctx;
    const dmg = await need(ctx.dmgSnapshot, "disk image");
    const zip = need(ctx.zip, "zip");
    const existing = ctx.existingRecord;
    if (existing?.autoupdate?.sha256 !== undefined && existing.autoupdate.sha256 !== zip.sha256) {
      throw new RelcastError(
        "E_CONFLICT",
        `version ${inputs.version} is already published with a different bundle (zip sha256 differs)`,
        "published versions are immutable: bump the version and publish again",
      );
    }
    const notes = need(ctx.notes, "notes");
    const fresh = buildRecord({
      config, store: ctx.store, version: inputs.version, summary: inputs.summary ?? notes.firstText, notes, localizedNotes: ctx.localizedNotes, dmg, zip,
      buildNumber: need(ctx.buildNumber, "build number"), edSignature: need(ctx.edSignature, "signature"),
      minimumSystemVersion: ctx.bundle?.minimumSystemVersion, hardwareRequirements: ctx.hardwareRequirements, keyChangeAllowed: ctx.keyChangeAllowed, autoupdateOptions: ctx.autoupdateOptions,
      publishedAt: inputs.publishedAt ?? new Date(), icon: ctx.icon,
      deltas: (ctx.deltas ?? []).map((d) => ({
        fromVersion: d.fromVersion, fromBuild: d.fromBuild, url: publicDownloadUrl(config.appUrl, d.fileName), sizeBytes: d.sizeBytes, sha256: d.sha256, edSignature: d.edSignature,
      })),
    });
    // A record is written once and read by every later command: one those could not read is refused here, before any write.
    const readable = releaseRecordSchema.safeParse(fresh);
    if (!readable.success) {
      throw new RelcastError(
        "E_INPUT",
        `the release record for ${inputs.version} would not pass relcast's own reading of records:\n${describeZodIssues(readable.error, recordKey(inputs.version))}`,
        "fix the input the named field comes from (flags, config, release notes or Info.plist) and publish again; nothing was written",
      );
    }
    // A re-run is a no-op or the completion of an interrupted publish, never a quiet edit of a published release.
    const differs = existing ? recordDifferences(existing, fresh) : [];
    if (differs.length > 0) {
      throw new RelcastError(
        "E_CONFLICT",
        `version ${inputs.version} is already published with a different ${differs.join(", ")}`,
        "published records are immutable: re-run with the inputs of the first publish (notes, summary, channel, config, key), or publish a new version",
      );
    }
    const record = existing ?? fresh;
    const immutable = config.cacheControl?.immutable ?? CACHE_IMMUTABLE;
    const mutable = config.cacheControl?.mutable ?? CACHE_NO_CACHE;
    const dmgKey = versionedKey(inputs.version, dmgFileName(config.pluginId, inputs.version));
    const zipKey = versionedKey(inputs.version, zipFileName(config.pluginId, inputs.version));
    const recordBytes = Buffer.from(JSON.stringify(record, null, 2) + "\n");
    const writes: PlannedWrite[] = [
      await planArtifact(ctx, dmgKey, dmg, immutable),
      await planArtifact(ctx, zipKey, zip, immutable),
      {
        step: "record", op: "put", key: recordKey(inputs.version), source: { kind: "bytes", bytes: recordBytes }, sizeBytes: recordBytes.length,
        sha256: createHash("sha256").update(recordBytes).digest("hex"), contentType: "application/json", cacheControl: immutable,
        precondition: { kind: "create-only" }, needed: !existing, why: existing ? "already published" : "new",
      },
    ];
    // Delta updates (and the icon): created once beside the zip, uploaded with it, before the record and the feeds that name them.
    const ownKeys: string[] = [];
    for (const delta of ctx.deltas ?? []) {
      ownKeys.push(versionedKey(inputs.version, delta.fileName));
      writes.push(await planArtifact(ctx, ownKeys.at(-1)!, delta, immutable));
    }
    // The icon as the record names it (a re-run of a release published without one adds none).
    if (record.icon && ctx.icon) {
      ownKeys.push(versionedKey(inputs.version, record.icon.fileName));
      writes.push(await planArtifact(ctx, ownKeys.at(-1)!, ctx.icon, immutable));
    }
    // The tree manifest later deltas are made from: like the zip it describes, written once and before the record.
    if (ctx.treeManifest) writes.splice(2, 0, await planArtifact(ctx, treeManifestKey(inputs.version), ctx.treeManifest, immutable));
    const manifests = ctx.treeManifest ? 1 : 0;
    writes.push(...(await planDownloads(ctx.store, ctx.store, record, immutable, "downloads", new Set([dmgKey, zipKey, ...ownKeys]))));
    const latest = await planLatest(ctx.store, config.pluginId, inputs.version, record.channel, [dmgKey, zipKey], mutable, ctx.catalog?.entries);
    writes.push(...latest.writes);
    const { feeds, site } = await planFeedsAndSite(ctx.store, config, { kind: "add", record }, ctx.workDir, keysBeforeFeeds(writes), 1, ctx.feedSigning);
    writes.push(...feeds.writes, ...site);
    if (feeds.signedBecause) ctx.logger.info(`the appcast is signed: ${feeds.signedBecause}`);
    const link = record.autoupdate?.releaseNotesLink;
    if (feeds.signedBecause && link && !hostedNotesPageKey(record)) {
      ctx.logger.warn(`the appcast is signed, but the release-notes link ${link} is not a page relcast hosts: it carries no signature, so apps with SURequireSignedFeed show no notes for ${record.version}; set appcast.releaseNotes to "page" for later releases`);
    }
    const own = 3 + manifests + ownKeys.length;
    const stored = writes.slice(0, own).filter((w) => !w.needed).length;
    ctx.record = record;
    ctx.plan = { title: `${config.pluginId} ${inputs.version}`, mode: stored === own ? "noop" : stored > 0 ? "resume" : "new", record, latest: latest.latest, writes };
  },
};
