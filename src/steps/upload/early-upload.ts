import { dmgFileName, versionedKey, zipFileName } from "../../domain/release-layout.js";
import { CACHE_IMMUTABLE, contentTypeFor } from "../../store/content-types.js";
import type { ReleaseContext } from "../release-context.js";

/**
 * Starts sending a versioned artifact before the plan, where the store can
 * (S3 stages the parts of a multipart upload): the disk image while the
 * bundle is zipped (it is snapshotted by then), the zip as soon as it is
 * signed. The upload step's put of the same file, headers as planned here,
 * completes it under its create-only condition; until then nothing is an
 * object, so a run that stops earlier leaves the store as it was (the open
 * upload is aborted). Not for a dry run, nor for a re-run of a published
 * version (its objects are there).
 */
function startEarlyUpload(ctx: ReleaseContext, key: string, file: string): void {
  if (ctx.inputs.dryRun || ctx.existingRecord || !ctx.store.stage) return;
  ctx.store.stage(key, file, { contentType: contentTypeFor(key), cacheControl: ctx.config.cacheControl?.immutable ?? CACHE_IMMUTABLE });
}

export function startDiskImageUpload(ctx: ReleaseContext): void {
  const key = versionedKey(ctx.inputs.version, dmgFileName(ctx.config.pluginId, ctx.inputs.version));
  ctx.dmgSnapshot?.then((dmg) => startEarlyUpload(ctx, key, dmg.file), () => undefined);
}

export function startZipUpload(ctx: ReleaseContext, file: string): void {
  startEarlyUpload(ctx, versionedKey(ctx.inputs.version, zipFileName(ctx.config.pluginId, ctx.inputs.version)), file);
}
