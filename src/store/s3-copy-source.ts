import { HeadObjectCommand, type S3Client } from "@aws-sdk/client-s3";
import { SourceChangedError } from "../core/errors.js";
import { httpStatusOf as status } from "./s3-errors.js";

/**
 * The version a copy reads. Every copy request names the source's ETag as
 * it was when the copy began (`x-amz-copy-source-if-match`), so S3 refuses
 * a part or a CopyObject of any other version: a source overwritten midway
 * can never give an object made of the parts of two versions.
 */
export interface PinnedSource {
  client: S3Client;
  bucket: string;
  /** Full keys, prefix included. */
  fromKey: string;
  toKey: string;
  size: number;
  /** The ETag the source had when the copy began (from a HEAD, or from the write that made it). */
  etag: string;
}

async function headSource(src: PinnedSource): Promise<{ etag: string; size: number } | undefined> {
  try {
    const res = await src.client.send(new HeadObjectCommand({ Bucket: src.bucket, Key: src.fromKey }));
    return { etag: res.ETag ?? "", size: res.ContentLength ?? 0 };
  } catch (err) {
    if (status(err) === 404) return undefined;
    throw err;
  }
}

function changed(src: PinnedSource, now: { etag: string } | undefined): SourceChangedError {
  const from = `s3://${src.bucket}/${src.fromKey}`;
  const to = `s3://${src.bucket}/${src.toKey}`;
  return new SourceChangedError(from, to, now ? `the source was replaced while it was copied (ETag ${src.etag} when the copy began, ${now.etag} now)` : "the source was removed while it was copied");
}

/**
 * What a failed copy request means. A 412 or 404 may be the source's doing
 * (its ETag no longer matches; it is gone) or, on a conditional CopyObject,
 * the destination's condition: one HEAD of the source tells them apart.
 */
export async function explainCopyFailure(src: PinnedSource, err: unknown): Promise<unknown> {
  const code = status(err);
  if (code !== 412 && code !== 404) return err;
  const now = await headSource(src).catch(() => ({ etag: src.etag, size: src.size }));
  return now === undefined || now.etag !== src.etag ? changed(src, now) : err;
}

/**
 * Before the parts of a multipart copy are joined: the source must still be
 * the version pinned, with the size the ranges were cut from. A second
 * check only, never the guarantee: a source replaced and put back with the
 * same bytes (A, B, A) shows the pinned ETag again, though parts copied
 * meanwhile are B's. Only a server that enforces the pin on every part copy
 * keeps them apart, so copies go in parts only on a store the proof found
 * enforcing it (s3-conditional-probe.ts, s3-multipart-copy.ts).
 */
export async function assertSourceUnchanged(src: PinnedSource): Promise<void> {
  const now = await headSource(src);
  if (now === undefined || now.etag !== src.etag) throw changed(src, now);
  if (now.size !== src.size) {
    throw new Error(`pipeline bug: the copy of ${src.fromKey} was cut into parts for ${src.size} bytes, but the source holds ${now.size}`);
  }
}
