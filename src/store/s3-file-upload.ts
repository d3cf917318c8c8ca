import { open, stat } from "node:fs/promises";
import { PutObjectCommand, type S3Client } from "@aws-sdk/client-s3";
import type { UploadProgress } from "./s3-options.js";
import type { PartBuffers } from "./s3-part-buffers.js";
import { readPart, stageUpload, type StagedUpload } from "./s3-staged-upload.js";

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
  /** The store's part buffers, shared by all its uploads. */
  buffers: PartBuffers;
  /** The store's idle timeout for one request (s3.requestTimeoutMs). */
  requestTimeoutMs?: number;
  /** Reported with the store-relative key. */
  progressKey: string;
  onProgress?: (progress: UploadProgress) => void;
}

/**
 * Uploads a file from disk: one PutObject when it fits in a part, otherwise
 * a multipart upload (stageUpload's, completed at once) with `queueSize`
 * parts in flight. Every part is read by position into one of the store's
 * reused part buffers: no stream chunks gathered and concatenated into each
 * part (lib-storage's Upload held about partSize + 1 MiB per part in flight
 * that way, and left it all as garbage), nothing more than partSize ×
 * queueSize held for all the store's uploads.
 *
 * The condition is evaluated where S3 evaluates it: on the PutObject, or on
 * CompleteMultipartUpload. A failed upload (lost condition included) is
 * aborted so no parts linger.
 */
/** Uploads of this process still running, so an interrupted or failing run can stop them. */
const active = new Map<StagedUpload, string>();

/**
 * Stops every running upload from sending more parts and aborts it. The
 * store's open-upload tracker (s3-open-uploads.ts) also aborts the multipart
 * uploads themselves, should this abort not get through before the process
 * exits.
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

async function putWhole(req: FileUploadRequest, size: number): Promise<{ etag: string }> {
  const buffer = await req.buffers.acquire(size);
  try {
    const fh = await open(req.file, "r");
    try {
      await readPart(fh, buffer, size, 0, req.file);
    } finally {
      await fh.close();
    }
    const res = await req.client.send(
      new PutObjectCommand({
        Bucket: req.bucket, Key: req.key, Body: buffer.subarray(0, size), ContentLength: size, ContentType: req.contentType,
        ...(req.cacheControl !== undefined && { CacheControl: req.cacheControl }),
        ...(req.ifNoneMatch !== undefined && { IfNoneMatch: req.ifNoneMatch }),
        ...(req.ifMatch !== undefined && { IfMatch: req.ifMatch }),
      }),
    );
    if (!res.ETag) throw new Error(`upload of ${req.key} returned no ETag`);
    req.onProgress?.({ key: req.progressKey, loaded: size, total: size });
    return { etag: res.ETag };
  } finally {
    req.buffers.release(buffer);
  }
}

export async function uploadFile(req: FileUploadRequest): Promise<{ etag: string }> {
  const { size } = await stat(req.file);
  if (size <= req.partSizeBytes) return putWhole(req, size);
  const upload = stageUpload({
    client: req.client, bucket: req.bucket, key: req.key, file: req.file, size, contentType: req.contentType,
    partSizeBytes: req.partSizeBytes, queueSize: req.queueSize, buffers: req.buffers, progressKey: req.progressKey, recoverLostComplete: false,
    ...(req.cacheControl !== undefined && { cacheControl: req.cacheControl }),
    ...(req.onProgress !== undefined && { onProgress: req.onProgress }),
    ...(req.requestTimeoutMs !== undefined && { requestTimeoutMs: req.requestTimeoutMs }),
  });
  active.set(upload, req.key);
  try {
    return await upload.complete({ ...(req.ifNoneMatch !== undefined && { ifNoneMatch: req.ifNoneMatch }), ...(req.ifMatch !== undefined && { ifMatch: req.ifMatch }) });
  } catch (err) {
    await upload.abort();
    throw err;
  } finally {
    active.delete(upload);
  }
}
