import { registerS3StoreFactory, type StoreSettings } from "./open-store.js";
import type { S3StoreOptions } from "./s3-options.js";
import { createS3Store } from "./s3-store.js";

/** Config `s3: {...}` plus the bucket and prefix of `s3://bucket/prefix` → createS3Store options. */
export function s3OptionsFrom(bucket: string, prefix: string, settings: StoreSettings): S3StoreOptions {
  const s3 = settings.s3 ?? {};
  const onProgress = settings.onProgress;
  return {
    bucket,
    prefix,
    ...(s3.region !== undefined && { region: s3.region }),
    ...(s3.endpoint !== undefined && { endpoint: s3.endpoint }),
    ...(s3.forcePathStyle !== undefined && { forcePathStyle: s3.forcePathStyle }),
    ...(s3.requestChecksumCalculation !== undefined && { requestChecksumCalculation: s3.requestChecksumCalculation }),
    ...(s3.requestTimeoutMs !== undefined && { requestTimeoutMs: s3.requestTimeoutMs }),
    ...(s3.uploadConcurrency !== undefined && { queueSize: s3.uploadConcurrency }),
    ...(s3.partSizeMiB !== undefined && { partSizeBytes: s3.partSizeMiB * 1024 * 1024 }),
    ...(onProgress !== undefined && { onProgress: (p) => onProgress(p.loaded, p.total, p.key) }),
    ...(s3.conditionalWrites !== undefined && { conditionalWrites: s3.conditionalWrites }),
    ...(settings.onWarning !== undefined && { onWarning: settings.onWarning }),
  };
}

// Imported lazily by openStore on the first s3:// URL, so the SDK loads only then.
registerS3StoreFactory(async ({ bucket, prefix, settings }) => createS3Store(s3OptionsFrom(bucket, prefix, settings)));
