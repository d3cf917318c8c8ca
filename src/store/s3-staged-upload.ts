import { open, type FileHandle } from "node:fs/promises";
import {
  AbortMultipartUploadCommand, ChecksumAlgorithm, CompleteMultipartUploadCommand, CreateMultipartUploadCommand, UploadPartCommand,
  type CompletedPart, type S3Client, type UploadPartCommandOutput,
} from "@aws-sdk/client-s3";
import { recoverFailedComplete } from "./s3-complete-recovery.js";
import type { UploadProgress } from "./s3-options.js";
import type { PartBuffers } from "./s3-part-buffers.js";
import { serverWorkTimeout } from "./s3-server-work.js";

export interface StageRequest {
  client: S3Client;
  bucket: string;
  /** Full key, prefix included. */
  key: string;
  file: string;
  size: number;
  contentType: string;
  cacheControl?: string;
  partSizeBytes: number;
  queueSize: number;
  /** The store's part buffers, shared by all its uploads. */
  buffers: PartBuffers;
  /**
   * Default true: a lost condition on Complete whose object has exactly these
   * parts' ETag is taken as this upload's own retried Complete. False where the
   * caller must see a create-only write of bytes already there refused.
   */
  recoverLostComplete?: boolean;
  /** The store's idle timeout for one request (s3.requestTimeoutMs); the Complete's grows with the bytes joined. */
  requestTimeoutMs?: number;
  progressKey: string;
  onProgress?: (progress: UploadProgress) => void;
}

/**
 * A multipart upload whose parts go out now and whose object comes into
 * being only at `complete`: S3 shows nothing of it before then (parts of an
 * open upload are not an object), so a run that fails before its upload
 * step aborts it and leaves the store as it was.
 */
export interface StagedUpload {
  readonly file: string;
  readonly size: number;
  readonly contentType: string;
  readonly cacheControl: string | undefined;
  /** Waits for the parts, then CompleteMultipartUpload with the write's condition (S3 evaluates it there). */
  complete(condition: { ifNoneMatch?: "*"; ifMatch?: string }): Promise<{ etag: string }>;
  /**
   * Stops sending parts and aborts the upload. True when S3 acknowledged the
   * abort (or no upload was created); otherwise the open-upload tracker still
   * holds it and aborts it again.
   */
  abort(): Promise<boolean>;
}

const MAX_PARTS = 10_000;

function checksumsOf(res: UploadPartCommandOutput): Partial<CompletedPart> {
  return {
    ...(res.ChecksumCRC32 && { ChecksumCRC32: res.ChecksumCRC32 }),
    ...(res.ChecksumCRC32C && { ChecksumCRC32C: res.ChecksumCRC32C }),
    ...(res.ChecksumCRC64NVME && { ChecksumCRC64NVME: res.ChecksumCRC64NVME }),
    ...(res.ChecksumSHA1 && { ChecksumSHA1: res.ChecksumSHA1 }),
    ...(res.ChecksumSHA256 && { ChecksumSHA256: res.ChecksumSHA256 }),
  };
}

/** Reads `length` bytes at `start` of the open file into `buffer`; a file that became shorter is refused. */
export async function readPart(fh: FileHandle, buffer: Buffer, length: number, start: number, file: string): Promise<void> {
  for (let got = 0; got < length; ) {
    const { bytesRead } = await fh.read(buffer, got, length - got, start + got);
    if (bytesRead === 0) throw new Error(`${file} became shorter while it was uploaded`);
    got += bytesRead;
  }
}

/**
 * Starts uploading `file` as the parts of a new multipart upload, `queueSize`
 * parts at a time, each read by position into one of the store's part
 * buffers (memory: partSize × queueSize for all the store's uploads, whatever
 * the files' sizes).
 * Written here rather than with lib-storage's Upload because Upload completes
 * the object as soon as the last part is sent; a publish must not make an
 * object before its plan is made and its upload step runs.
 */
export function stageUpload(req: StageRequest): StagedUpload {
  const controller = new AbortController();
  const signal = controller.signal;
  const partSize = Math.max(req.partSizeBytes, Math.ceil(req.size / MAX_PARTS));
  const count = Math.max(1, Math.ceil(req.size / partSize));
  let uploadId: string | undefined;
  let loaded = 0;

  const sent = (async () => {
    const checksums = (await req.client.config.requestChecksumCalculation()) === "WHEN_SUPPORTED";
    const created = await req.client.send(
      new CreateMultipartUploadCommand({
        Bucket: req.bucket, Key: req.key, ContentType: req.contentType,
        ...(req.cacheControl !== undefined && { CacheControl: req.cacheControl }),
        ...(checksums && { ChecksumAlgorithm: ChecksumAlgorithm.CRC32 }),
      }),
    );
    if (!created.UploadId) throw new Error(`CreateMultipartUpload of ${req.key} returned no UploadId`);
    // Not cut short by an abort: an upload S3 created after the client gave up would be left open; this one is aborted.
    uploadId = created.UploadId;
    const parts: CompletedPart[] = new Array(count);
    const fh = await open(req.file, "r");
    try {
      let next = 0;
      const sender = async () => {
        while (next < count) {
          if (signal.aborted) throw new Error(`the upload of ${req.key} was stopped`);
          const n = next++;
          const start = n * partSize;
          const length = Math.min(partSize, req.size - start);
          const buffer = await req.buffers.acquire(length);
          let res: UploadPartCommandOutput;
          try {
            await readPart(fh, buffer, length, start, req.file);
            res = await req.client.send(
              new UploadPartCommand({ Bucket: req.bucket, Key: req.key, UploadId: uploadId, PartNumber: n + 1, Body: buffer.subarray(0, length), ContentLength: length }),
              { abortSignal: signal },
            );
          } finally {
            req.buffers.release(buffer);
          }
          if (!res.ETag) throw new Error(`UploadPart ${n + 1} of ${req.key} returned no ETag`);
          parts[n] = { PartNumber: n + 1, ETag: res.ETag, ...checksumsOf(res) };
          loaded += length;
          req.onProgress?.({ key: req.progressKey, loaded, total: req.size });
        }
      };
      await Promise.all(Array.from({ length: Math.min(req.queueSize, count) }, sender));
    } finally {
      await fh.close();
    }
    return parts;
  })();
  // Awaited by complete(); a failure here is that call's error, never an unhandled rejection.
  sent.catch(() => undefined);

  async function abort(): Promise<boolean> {
    controller.abort();
    await sent.catch(() => undefined);
    if (uploadId === undefined) return true;
    return req.client.send(new AbortMultipartUploadCommand({ Bucket: req.bucket, Key: req.key, UploadId: uploadId })).then(() => true, () => false);
  }

  return {
    file: req.file,
    size: req.size,
    contentType: req.contentType,
    cacheControl: req.cacheControl,
    abort,
    async complete(condition) {
      const parts = await sent;
      try {
        const res = await req.client.send(
          new CompleteMultipartUploadCommand({
            Bucket: req.bucket, Key: req.key, UploadId: uploadId, MultipartUpload: { Parts: parts },
            ...(condition.ifNoneMatch !== undefined && { IfNoneMatch: condition.ifNoneMatch }),
            ...(condition.ifMatch !== undefined && { IfMatch: condition.ifMatch }),
          }),
          // The server answers once it has joined the parts: abandoned early, the Complete would be sent again meanwhile.
          req.requestTimeoutMs !== undefined ? serverWorkTimeout(req.requestTimeoutMs, req.size) : undefined,
        );
        if (!res.ETag) throw new Error(`CompleteMultipartUpload of ${req.key} returned no ETag`);
        return { etag: res.ETag };
      } catch (err) {
        // A lost condition may be our own Complete, retried after its answer was lost (a server that assembles a big
        // object slowly, past the idle timeout); so may NoSuchUpload (a Complete that made the object but answered 500,
        // retried). The object there is ours only if it is exactly what these parts and headers make.
        const cond = condition.ifNoneMatch !== undefined ? "if-none-match" : condition.ifMatch !== undefined ? "if-match" : undefined;
        return recoverFailedComplete({
          client: req.client, bucket: req.bucket, key: req.key, parts, size: req.size, contentType: req.contentType,
          cacheControl: req.cacheControl, condition: cond, recover412: req.recoverLostComplete !== false,
        }, err);
      }
    },
  };
}
