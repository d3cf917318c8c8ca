import {
  AbortMultipartUploadCommand, CompleteMultipartUploadCommand, CopyObjectCommand, CreateMultipartUploadCommand, UploadPartCopyCommand,
  type CompletedPart, type S3Client,
} from "@aws-sdk/client-s3";
import { RelcastError } from "../core/errors.js";
import { recoverFailedComplete } from "./s3-complete-recovery.js";
import { assertSourceUnchanged, explainCopyFailure, type PinnedSource } from "./s3-copy-source.js";
import { copySource } from "./s3-object-meta.js";
import { serverWorkTimeout } from "./s3-server-work.js";

/**
 * A server-side copy of any size. S3 copies an object of at most 5 GiB in
 * one CopyObject and refuses a bigger source outright; a plugin that ships a
 * model file has a zip and a disk image bigger than that. One CopyObject is
 * also a single request that sends nothing until the whole object is copied,
 * so a server that copies slowly (moto: 2 GiB in over 30 s on a busy machine)
 * runs past the idle timeout that guards every request. Sources above
 * {@link MULTIPART_COPY_ABOVE} are therefore copied as the parts of a
 * multipart upload (UploadPartCopy of byte ranges, several at once), each
 * part a bounded request, the way `aws s3 cp` copies between keys.
 *
 * The condition is evaluated where S3 evaluates it, on CopyObject or on
 * CompleteMultipartUpload. Every request copies the version the copy began
 * with (the source's ETag, `CopySourceIfMatch`): a source replaced midway
 * stops the copy with SourceChangedError, nothing made. Parts are used only
 * on a store that enforces that pin on UploadPartCopy (the proof asks);
 * elsewhere each part would copy whatever version is there when it arrives,
 * and a source put back with the same bytes (A, B, A) would pass any check.
 * A HEAD before the parts are joined is a second check (s3-copy-source.ts).
 * A failed multipart copy is aborted; the store's
 * open-upload tracker (a middleware on the client) aborts it too should the
 * process be stopped first.
 */
export interface CopyRequest {
  client: S3Client;
  bucket: string;
  /** Full keys, prefix included. */
  fromKey: string;
  toKey: string;
  /** The source's size and ETag when the copy began (a HEAD just before, or the write that made it). */
  size: number;
  sourceEtag: string;
  contentType: string;
  cacheControl?: string | undefined;
  ifNoneMatch?: "*" | undefined;
  ifMatch?: string | undefined;
  /** Part copies in flight. */
  queueSize: number;
  /** Defaults {@link MULTIPART_COPY_ABOVE} and {@link COPY_PART_BYTES}. */
  multipartAbove?: number | undefined;
  partBytes?: number | undefined;
  /** Default {@link MAX_SINGLE_COPY}: the largest source one CopyObject copies. */
  singleCopyUpTo?: number | undefined;
  /**
   * The store refuses an UploadPartCopy whose source pin names another ETag
   * (proved by s3-conditional-probe.ts). Default true. When false, a copy
   * never goes in parts: up to {@link MAX_SINGLE_COPY} it is one CopyObject
   * (one request copies one version), above that it is refused.
   */
  partCopyPinned?: boolean | undefined;
  /** The store's idle timeout for one request (s3.requestTimeoutMs). */
  requestTimeoutMs: number;
  /** Awaited before each request: once the run is stopping it never resolves (no new request goes out). */
  gate?: () => Promise<void>;
  /** Told of the request that makes the object (CopyObject or Complete), which a stop cannot take back. */
  finishing?: (made: Promise<unknown>) => void;
}

/**
 * Above this a copy goes in parts. Below it one CopyObject is one request
 * (a multipart copy is at least three, and on moto a second pass over the
 * bytes when the parts are joined); above it the single request's silence
 * grows with the object (2 GiB ran past moto's 30 s on a busy machine).
 */
export const MULTIPART_COPY_ABOVE = 1024 * 1024 * 1024;
/** S3's largest single copy, and its largest part. */
export const MAX_SINGLE_COPY = 5 * 1024 * 1024 * 1024;
/** Part size of a multipart copy (a whole number of MiB; S3: at most 10,000 parts of at most 5 GiB). */
export const COPY_PART_BYTES = 256 * 1024 * 1024;
const MAX_PARTS = 10_000;
/** A copy request's idle timeout grows with the bytes it copies (or joins, for Complete): s3-server-work.ts. */
const copyTimeout = serverWorkTimeout;

/** A source too big for one CopyObject, on a store that copies parts from whatever version is there. */
function unpinnedTooBig(req: CopyRequest, limit: number): RelcastError {
  return new RelcastError(
    "E_STORE",
    `cannot copy s3://${req.bucket}/${req.fromKey} to s3://${req.bucket}/${req.toKey}: at ${req.size} bytes it is over the ${limit} bytes one CopyObject copies, ` +
      "so it must be copied in parts, and this store accepts a part copy whose x-amz-copy-source-if-match names a wrong ETag " +
      "(found by the conditional-write proof at the start of this run): a source replaced while it is copied could give an object joined from two versions; nothing was written",
    "use a store that enforces x-amz-copy-source-if-match on UploadPartCopy (Amazon S3 does), or remove the proxy or gateway that drops the header; " +
      'only if nothing else ever writes to this store, set "s3": { "conditionalWrites": "unverified-single-writer" } in the config (see docs/s3-store.md)',
  );
}

export async function copyObject(req: CopyRequest): Promise<{ etag: string }> {
  const conditions = {
    ...(req.ifNoneMatch !== undefined && { IfNoneMatch: req.ifNoneMatch }),
    ...(req.ifMatch !== undefined && { IfMatch: req.ifMatch }),
  };
  const headers = { ContentType: req.contentType, ...(req.cacheControl !== undefined && { CacheControl: req.cacheControl }) };
  const gate = req.gate ?? (async () => undefined);
  const pinned: PinnedSource = { client: req.client, bucket: req.bucket, fromKey: req.fromKey, toKey: req.toKey, size: req.size, etag: req.sourceEtag };
  const source = { CopySource: copySource(req.bucket, req.fromKey), ...(req.sourceEtag !== "" && { CopySourceIfMatch: req.sourceEtag }) };
  const finishing = <T>(made: Promise<T>): Promise<T> => {
    req.finishing?.(made);
    return made;
  };
  const singleUpTo = req.singleCopyUpTo ?? MAX_SINGLE_COPY;
  if (req.partCopyPinned === false && req.size > singleUpTo) throw unpinnedTooBig(req, singleUpTo);
  if (req.size <= (req.partCopyPinned === false ? singleUpTo : Math.min(req.multipartAbove ?? MULTIPART_COPY_ABOVE, singleUpTo))) {
    await gate();
    try {
      const res = await finishing(req.client.send(
        new CopyObjectCommand({ Bucket: req.bucket, Key: req.toKey, ...source, MetadataDirective: "REPLACE", ...headers, ...conditions }),
        copyTimeout(req.requestTimeoutMs, req.size),
      ));
      return { etag: res.CopyObjectResult?.ETag ?? "" };
    } catch (err) {
      throw await explainCopyFailure(pinned, err);
    }
  }
  const partSize = Math.max(req.partBytes ?? COPY_PART_BYTES, Math.ceil(req.size / MAX_PARTS / (1 << 20)) * (1 << 20));
  const count = Math.ceil(req.size / partSize);
  await gate(); // once the run is stopping, no upload is opened (a stop during the source's HEAD left one open)
  const created = await req.client.send(new CreateMultipartUploadCommand({ Bucket: req.bucket, Key: req.toKey, ...headers }));
  const uploadId = created.UploadId;
  if (!uploadId) throw new Error(`CreateMultipartUpload of ${req.toKey} returned no UploadId`);
  try {
    const parts: CompletedPart[] = new Array(count);
    let next = 0;
    let failed = false;
    const copier = async () => {
      while (next < count && !failed) {
        await gate();
        const n = next++;
        const start = n * partSize;
        const end = Math.min(req.size, start + partSize) - 1;
        try {
          const res = await req.client.send(
            new UploadPartCopyCommand({
              Bucket: req.bucket, Key: req.toKey, UploadId: uploadId, PartNumber: n + 1,
              ...source, CopySourceRange: `bytes=${start}-${end}`,
            }),
            copyTimeout(req.requestTimeoutMs, end - start + 1),
          );
          const etag = res.CopyPartResult?.ETag;
          if (!etag) throw new Error(`UploadPartCopy ${n + 1} of ${req.toKey} returned no ETag`);
          parts[n] = { PartNumber: n + 1, ETag: etag };
        } catch (err) {
          failed = true;
          throw err;
        }
      }
    };
    // Every copier is waited for before the upload is completed or aborted: no part lands after an abort.
    const settled = await Promise.allSettled(Array.from({ length: Math.min(req.queueSize, count) }, copier));
    const failure = settled.find((s) => s.status === "rejected");
    // A part refused (412) or missing (404) because the source was replaced: said so, not retried.
    if (failure) throw await explainCopyFailure(pinned, failure.reason);
    await assertSourceUnchanged(pinned);
    await gate();
    try {
      const res = await finishing(req.client.send(
        new CompleteMultipartUploadCommand({ Bucket: req.bucket, Key: req.toKey, UploadId: uploadId, MultipartUpload: { Parts: parts }, ...conditions }),
        copyTimeout(req.requestTimeoutMs, req.size),
      ));
      if (!res.ETag) throw new Error(`CompleteMultipartUpload of ${req.toKey} returned no ETag`);
      return { etag: res.ETag };
    } catch (err) {
      // A lost condition may be this copy's own Complete, retried after its answer was lost; so may NoSuchUpload. The
      // object there is ours only if it is exactly what these parts and headers make (s3-complete-recovery.ts).
      return await recoverFailedComplete({
        client: req.client, bucket: req.bucket, key: req.toKey, parts, size: req.size, contentType: req.contentType, cacheControl: req.cacheControl,
        condition: req.ifNoneMatch !== undefined ? "if-none-match" : req.ifMatch !== undefined ? "if-match" : undefined, recover412: true,
      }, err);
    }
  } catch (err) {
    await req.client.send(new AbortMultipartUploadCommand({ Bucket: req.bucket, Key: req.toKey, UploadId: uploadId })).catch(() => undefined);
    throw err;
  }
}
