import { createReadStream } from "node:fs";
import { stat } from "node:fs/promises";
import type { S3Client } from "@aws-sdk/client-s3";
import { Upload } from "@aws-sdk/lib-storage";
import type { UploadProgress } from "./s3-options.js";

export interface FileUploadRequest {
  client: S3Client;
  bucket: string;
  /** Full key, prefix included. */
  key: string;
  file: string;
  contentType: string;
  cacheControl?: string;
  ifNoneMatch?: "*";
  ifMatch?: string;
  partSizeBytes: number;
  queueSize: number;
  /** Reported with the store-relative key. */
  progressKey: string;
  onProgress?: (progress: UploadProgress) => void;
}

const MAX_PARTS = 10_000;

/**
 * Streams a file from disk with lib-storage: one PutObject when it fits in a
 * part, otherwise a multipart upload with `queueSize` parts in flight. Only
 * partSize × queueSize bytes are held in memory.
 *
 * Conditions ride along in `params`: Upload spreads them into PutObject and
 * CompleteMultipartUpload (where S3 evaluates them) and the serializers of
 * CreateMultipartUpload/UploadPart drop members their request shapes lack.
 * A failed upload (lost condition included) is aborted so no parts linger.
 */
/** Uploads of this process still running, so an interrupted or failing run can stop them. */
const active = new Map<Upload, string>();

/**
 * Stops every running upload from sending more parts. lib-storage's own
 * abort only sends AbortMultipartUpload once the parts in flight have
 * answered (too late for a process about to exit); the store's open-upload
 * tracker (s3-open-uploads.ts) aborts the multipart uploads themselves.
 */
export function stopActiveUploads(): string[] {
  const stopped: string[] = [];
  for (const [upload, key] of active) {
    void upload.abort().catch(() => undefined);
    stopped.push(key);
  }
  active.clear();
  return stopped;
}

export async function uploadFile(req: FileUploadRequest): Promise<{ etag: string }> {
  const { size } = await stat(req.file);
  const upload = new Upload({
    client: req.client,
    // S3 takes at most 10,000 parts: grow the part for files beyond that.
    partSize: Math.max(req.partSizeBytes, Math.ceil(size / MAX_PARTS)),
    queueSize: req.queueSize,
    leavePartsOnError: false,
    params: {
      Bucket: req.bucket,
      Key: req.key,
      Body: createReadStream(req.file, { highWaterMark: 1024 * 1024 }),
      ContentLength: size,
      ContentType: req.contentType,
      ...(req.cacheControl !== undefined && { CacheControl: req.cacheControl }),
      ...(req.ifNoneMatch !== undefined && { IfNoneMatch: req.ifNoneMatch }),
      ...(req.ifMatch !== undefined && { IfMatch: req.ifMatch }),
    },
  });
  const onProgress = req.onProgress;
  if (onProgress) {
    upload.on("httpUploadProgress", (p) => {
      onProgress({ key: req.progressKey, loaded: p.loaded ?? 0, total: p.total ?? size });
    });
  }
  const done = upload.done();
  active.set(upload, req.key);
  let result;
  try {
    result = await done;
  } finally {
    active.delete(upload);
  }
  if (!result.ETag) throw new Error(`upload of ${req.key} returned no ETag`);
  return { etag: result.ETag };
}
