import type { ConditionalWritesMode } from "./s3-write-guard.js";

/** Bytes sent so far for one upload; `total` is unknown only for streams of unknown size. */
export interface UploadProgress {
  key: string;
  loaded: number;
  total?: number;
}

export type ChecksumMode = "WHEN_SUPPORTED" | "WHEN_REQUIRED";

/**
 * Settings of one S3 (or S3-compatible) store. Credentials never appear here:
 * they come from the standard AWS chain (env, shared profile, web identity).
 */
export interface S3StoreOptions {
  bucket: string;
  /** Key prefix inside the bucket, without leading or trailing slash. */
  prefix?: string;
  /** Falls back to AWS_REGION / the profile when absent. */
  region?: string;
  /** For R2, B2, MinIO and test servers. */
  endpoint?: string;
  forcePathStyle?: boolean;
  /** `WHEN_REQUIRED` for providers that reject the SDK's default CRC checksums (R2, B2). */
  requestChecksumCalculation?: ChecksumMode;
  /** A request whose socket is idle this long is abandoned (and retried); a stalled server cannot hang a publish. */
  requestTimeoutMs?: number;
  /** Multipart part size for file uploads; S3 requires at least 5 MiB. */
  partSizeBytes?: number;
  /** Parts uploaded in parallel per file (and part copies in flight per server-side copy). */
  queueSize?: number;
  /** Server-side copies of sources above this size go in parts (default and why: s3-multipart-copy.ts); a knob for tests. */
  multipartCopyAboveBytes?: number;
  /** Part size of a multipart copy (at least 5 MiB); a knob for tests. */
  copyPartBytes?: number;
  /** The largest source one CopyObject copies (S3: 5 GiB); a knob for tests. */
  maxSingleCopyBytes?: number;
  onProgress?: (progress: UploadProgress) => void;
  /** Default `prove`: the first write waits until the store has shown it enforces If-None-Match and If-Match. */
  conditionalWrites?: ConditionalWritesMode;
  /** Where the store's warnings go (the opt-out's); default stderr. */
  onWarning?: (message: string) => void;
}

export const MIN_PART_SIZE = 5 * 1024 * 1024;
export const DEFAULT_PART_SIZE = 8 * 1024 * 1024;
export const DEFAULT_QUEUE_SIZE = 4;
/** SDK attempts per request (standard retry mode: backoff on 5xx, throttling, network). */
export const MAX_ATTEMPTS = 5;
export const DEFAULT_REQUEST_TIMEOUT_MS = 30_000;
export const CONNECT_TIMEOUT_MS = 10_000;

/** `releases/x.dmg` → `<prefix>/releases/x.dmg`. */
export function fullKey(prefix: string, key: string): string {
  return prefix === "" ? key : `${prefix}/${key}`;
}

/** Trims slashes so `a/b/`, `/a/b` and `a/b` name the same prefix. */
export function normalizePrefix(prefix: string | undefined): string {
  return (prefix ?? "").replace(/^\/+|\/+$/g, "");
}
