import { createHash } from "node:crypto";
import { HeadObjectCommand, type CompletedPart, type S3Client } from "@aws-sdk/client-s3";
import { PreconditionFailedError, RelcastError } from "../core/errors.js";
import { httpStatusOf as status } from "./s3-errors.js";

/**
 * The ETag S3 gives the object these parts make: the MD5 of the parts' MD5s,
 * then the part count. Undefined when a part's ETag is not an MD5 (SSE-KMS).
 */
export function multipartEtag(parts: readonly CompletedPart[]): string | undefined {
  const digests = parts.map((p) => /^"?([0-9a-f]{32})"?$/i.exec(p.ETag ?? "")?.[1]);
  if (digests.some((d) => d === undefined)) return undefined;
  const md5 = createHash("md5").update(Buffer.concat(digests.map((d) => Buffer.from(d!, "hex")))).digest("hex");
  return `"${md5}-${parts.length}"`;
}

/** A Complete answered NoSuchUpload: the upload is gone, completed (by a retried Complete of ours) or aborted. */
const completedMeanwhile = (err: unknown) => status(err) === 404 && (err as { name?: string }).name === "NoSuchUpload";

/** The upload whose CompleteMultipartUpload failed, and what its object must look like to be its own. */
export interface CompletedUpload {
  client: S3Client;
  bucket: string;
  /** Full key, prefix included. */
  key: string;
  parts: readonly CompletedPart[];
  size: number;
  contentType: string;
  cacheControl?: string | undefined;
  /** The write's condition, so an object of another writer is that condition lost. */
  condition?: "if-none-match" | "if-match" | undefined;
  /** False where a lost condition (412) must stay the caller's answer (a create-only file upload). */
  recover412: boolean;
}

/**
 * A Complete that failed may have made the object all the same: its answer
 * was lost and the SDK's retry met either the lost condition (412, the object
 * is there) or NoSuchUpload (S3 no longer knows an upload once completed).
 * The object there is taken as this upload's own only when it is exactly
 * what this upload makes: the multipart ETag of these parts, this size, and
 * these headers. The ETag alone is not enough: another writer that put the
 * same bytes with the same part size has the same ETag, and its
 * Content-Type or Cache-Control (text/html, no-store) must not pass for ours.
 * Returns the ETag when it is ours; otherwise throws what happened.
 */
export async function recoverFailedComplete(u: CompletedUpload, err: unknown): Promise<{ etag: string }> {
  const gone = completedMeanwhile(err);
  const expected = gone || (status(err) === 412 && u.recover412) ? multipartEtag(u.parts) : undefined;
  if (expected === undefined) throw err;
  const there = await u.client.send(new HeadObjectCommand({ Bucket: u.bucket, Key: u.key })).catch(() => undefined);
  if (
    there?.ETag === expected && there.ContentLength === u.size &&
    there.ContentType === u.contentType && (there.CacheControl ?? undefined) === u.cacheControl
  ) return { etag: expected };
  // A 412 stays the lost condition it is; NoSuchUpload with nothing there is the caller's to explain (s3-errors.ts).
  if (!gone || there === undefined) throw err;
  // The upload is gone and the key holds an object this upload did not make: another writer's, written meanwhile.
  if (u.condition !== undefined) throw new PreconditionFailedError(u.key, u.condition);
  const same = there.ETag === expected && there.ContentLength === u.size ? "the same bytes but other headers" : "other bytes";
  throw new RelcastError(
    "E_STORE",
    `s3://${u.bucket}/${u.key} was written meanwhile by another writer: this run's multipart upload of it was gone when it was completed ` +
      `(NoSuchUpload), and the object now there has ${same} (ETag ${there.ETag ?? "none"}, Content-Type ${there.ContentType ?? "none"}, ` +
      `Cache-Control ${there.CacheControl ?? "none"}); this upload wrote nothing`,
    "check what else writes to this store; run the same command again to write this run's object",
  );
}
