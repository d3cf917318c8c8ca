import { randomBytes } from "node:crypto";
import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  DeleteObjectCommand,
  PutObjectCommand,
  UploadPartCommand,
  UploadPartCopyCommand,
  type S3Client,
} from "@aws-sdk/client-s3";
import { PreconditionFailedError, RelcastError } from "../core/errors.js";
import { redactUrl } from "../core/redact-url.js";
import { httpStatusOf, isNotFound, mapS3Error, type WriteCondition } from "./s3-errors.js";
import { copySource } from "./s3-object-meta.js";
import { fullKey } from "./s3-options.js";

// Keys of relcast's own under the store's prefix; nothing else ever lives there. Its own file (no SDK): verify reads it.
export { PROBE_PREFIX } from "./probe-prefix.js";
import { PROBE_PREFIX } from "./probe-prefix.js";

/** A well-formed ETag no object has: S3 ETags are MD5 hex, and this is not the MD5 of the probe's bytes. */
const WRONG_ETAG = `"${"0".repeat(32)}"`;

export interface ProbeTarget {
  client: S3Client;
  bucket: string;
  prefix: string;
  endpoint?: string | undefined;
  /** The probe's key (full, prefix included) while it may exist: an interrupted run removes it. */
  onKey(key: string, present: boolean): void;
  /** True once the run is being interrupted: its cleanup may remove the key under the probe's feet. */
  stopped(): boolean;
}

/** What the probe asks the store to refuse, and how the refusal is checked. */
interface Check {
  what: string;
  run(): Promise<unknown>;
}

/** What the proof found beyond the conditions it requires. */
export interface ProvedStore {
  /**
   * The store refuses an UploadPartCopy whose `x-amz-copy-source-if-match`
   * names an ETag its source does not have. Only then may a copy go in
   * parts: each part is one request, and a server that ignores the pin copies
   * each from whatever version is there when it arrives, so a source replaced
   * and put back (A, B, A: the same ETag again) while it is copied gives an
   * object joined from two versions, which no check of the source before or
   * after can see.
   */
  partCopyPinned: boolean;
}

/**
 * Proves the store enforces the conditions relcast's concurrency rests on,
 * on a key of its own (`<prefix>/.relcast/probe/<random>`, removed
 * afterwards whatever happens): it creates the key create-only, then asks
 * for three writes that must be refused: a second create-only PutObject
 * (`If-None-Match: *`), a PutObject whose `If-Match` names a wrong ETag,
 * and a create-only CompleteMultipartUpload (how a disk image is written).
 * A store that accepts any of them is refused with E_STORE. Then, in the
 * multipart upload left open by the refused Complete, one UploadPartCopy
 * whose source pin names a wrong ETag: its answer only decides how copies
 * are made ({@link ProvedStore}).
 */
export async function proveConditionalWrites(t: ProbeTarget): Promise<ProvedStore> {
  const Key = fullKey(t.prefix, `${PROBE_PREFIX}${randomBytes(12).toString("hex")}`);
  const uri = `s3://${t.bucket}/${Key}`;
  const where = (operation: string, condition?: WriteCondition) => ({
    operation, bucket: t.bucket, key: Key, ...(t.endpoint !== undefined && { endpoint: t.endpoint }), ...(condition !== undefined && { condition }),
  });
  const put = async (body: string, conditions: { IfNoneMatch?: string; IfMatch?: string }, condition: WriteCondition) => {
    try {
      await t.client.send(new PutObjectCommand({ Bucket: t.bucket, Key, Body: body, ContentType: "text/plain", ...conditions }));
    } catch (err) {
      throw mapS3Error(err, where("PutObject", condition));
    }
  };
  let uploadId: string | undefined;
  const multipartCreateOnly = async () => {
    try {
      // As lib-storage does: S3 refuses part checksums (sent by default) on an upload created without an algorithm.
      const crc = (await t.client.config.requestChecksumCalculation()) === "WHEN_SUPPORTED";
      uploadId = (await t.client.send(new CreateMultipartUploadCommand({ Bucket: t.bucket, Key, ContentType: "text/plain", ...(crc && { ChecksumAlgorithm: "CRC32" }) }))).UploadId;
      const part = await t.client.send(new UploadPartCommand({ Bucket: t.bucket, Key, UploadId: uploadId, PartNumber: 1, Body: "relcast probe part" }));
      await t.client.send(new CompleteMultipartUploadCommand({
        Bucket: t.bucket, Key, UploadId: uploadId, IfNoneMatch: "*",
        MultipartUpload: { Parts: [{ PartNumber: 1, ETag: part.ETag, ...(part.ChecksumCRC32 && { ChecksumCRC32: part.ChecksumCRC32 }) }] },
      }));
      uploadId = undefined;
    } catch (err) {
      throw mapS3Error(err, where("CompleteMultipartUpload", "if-none-match"));
    }
  };
  const checks: Check[] = [
    { what: "a second create-only PutObject of the same key (If-None-Match: *)", run: () => put("relcast probe: second create", { IfNoneMatch: "*" }, "if-none-match") },
    { what: `a PutObject whose If-Match names a wrong ETag (${WRONG_ETAG})`, run: () => put("relcast probe: wrong etag", { IfMatch: WRONG_ETAG }, "if-match") },
    { what: "a create-only CompleteMultipartUpload of the same key (If-None-Match: *)", run: multipartCreateOnly },
  ];

  t.onKey(Key, true);
  try {
    try {
      await put("relcast probe: create", { IfNoneMatch: "*" }, "if-none-match");
    } catch (err) {
      // The key is new and random: a refusal means a retry of our own create whose answer was lost.
      if (!(err instanceof PreconditionFailedError)) throw err;
    }
    const accepted: string[] = [];
    for (const check of checks) {
      try {
        await check.run();
        accepted.push(check.what);
      } catch (err) {
        if (!(err instanceof PreconditionFailedError)) throw err;
      }
    }
    // Only worth asking once the multipart check was refused (its upload is still open, the key still the probe's).
    const partCopyPinned = accepted.length === 0 && uploadId !== undefined ? await refusesWrongCopyPin(t, Key, uploadId) : false;
    // Interrupted: the answers may be about a key the cleanup removed; conclude nothing (the process is ending).
    if (t.stopped()) await new Promise<never>(() => undefined);
    if (accepted.length > 0) {
      throw new RelcastError(
        "E_STORE",
        `the store at s3://${t.bucket}${t.prefix ? `/${t.prefix}` : ""}${t.endpoint ? ` (endpoint ${redactUrl(t.endpoint)})` : ""} does not enforce conditional writes: ` +
          `on a probe key of relcast's own (${uri}, removed again) it accepted ${accepted.join("; and ")}, which it must refuse (HTTP 412). ` +
          "Concurrent publishes, yanks or rebuilds to it could silently lose releases from the catalog, or replace a published file with other bytes; nothing was written",
        "use a store that enforces If-None-Match and If-Match (Amazon S3, Cloudflare R2, a current MinIO: see docs/s3-store.md), or remove the proxy or gateway that drops these headers; " +
          'only if nothing else ever writes to this store, set "s3": { "conditionalWrites": "unverified-single-writer" } in the config',
      );
    }
    return { partCopyPinned };
  } finally {
    await cleanUp(t, Key, uploadId);
  }
}

/**
 * Copies the probe key into a part of the probe's open upload, naming a wrong
 * ETag in `x-amz-copy-source-if-match`: S3 refuses it (412). Accepted (a
 * proxy that drops the header, a server that ignores it) or not implemented,
 * copies on this store must not go in parts (s3-multipart-copy.ts).
 */
async function refusesWrongCopyPin(t: ProbeTarget, Key: string, UploadId: string): Promise<boolean> {
  try {
    await t.client.send(new UploadPartCopyCommand({
      Bucket: t.bucket, Key, UploadId, PartNumber: 2, CopySource: copySource(t.bucket, Key), CopySourceIfMatch: WRONG_ETAG,
    }));
    return false;
  } catch (err) {
    const code = httpStatusOf(err);
    if (code === 412) return true;
    if (code === 501 || code === 400 || code === 405) return false;
    throw mapS3Error(err, { operation: "UploadPartCopy", bucket: t.bucket, key: Key, ...(t.endpoint !== undefined && { endpoint: t.endpoint }) });
  }
}

/** Removes the probe's key and any multipart upload it left; failures are left for `relcast gc`. */
async function cleanUp(t: ProbeTarget, Key: string, uploadId: string | undefined): Promise<void> {
  if (uploadId !== undefined) {
    await t.client.send(new AbortMultipartUploadCommand({ Bucket: t.bucket, Key, UploadId: uploadId })).catch(() => undefined);
  }
  try {
    await t.client.send(new DeleteObjectCommand({ Bucket: t.bucket, Key }));
    t.onKey(Key, false);
  } catch (err) {
    if (isNotFound(err)) t.onKey(Key, false);
  }
}
