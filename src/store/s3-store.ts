import type { Readable } from "node:stream";
import {
  DeleteObjectCommand,
  GetObjectCommand,
  HeadBucketCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
} from "@aws-sdk/client-s3";
import { PreconditionFailedError } from "../core/errors.js";
import type { ByteRange, CopySourceMeta, ObjectMeta, ObjectStore, PutBody, PutOptions, StoreLocation } from "./object-store.js";
import { assertSafeKey } from "./object-key.js";
import { createS3Client } from "./s3-client.js";
import { isNotFound, mapS3Error, type WriteCondition } from "./s3-errors.js";
import { stat } from "node:fs/promises";
import { uploadFile } from "./s3-file-upload.js";
import { stageUpload, type StagedUpload } from "./s3-staged-upload.js";
import { PartBuffers } from "./s3-part-buffers.js";
import { metaFromHeaders } from "./s3-object-meta.js";
import { copyObject } from "./s3-multipart-copy.js";
import { DEFAULT_PART_SIZE, DEFAULT_QUEUE_SIZE, DEFAULT_REQUEST_TIMEOUT_MS, MIN_PART_SIZE, fullKey, normalizePrefix, type S3StoreOptions } from "./s3-options.js";
import { stopActiveUploads } from "./s3-file-upload.js";
import { abortStaleMultipartUploads, type StaleUploadSweep } from "./s3-stale-uploads.js";
import { proveConditionalWrites } from "./s3-conditional-probe.js";
import { trackOpenUploads } from "./s3-open-uploads.js";
import { removeStaleProbes } from "./s3-stale-probes.js";
import { writeGuard } from "./s3-write-guard.js";
import { cleanUpOnSignal } from "./signal-cleanup.js";

/** The S3 store adds one maintenance verb beyond ObjectStore, for `relcast gc`. */
export interface S3Store extends ObjectStore {
  abortStaleUploads(olderThan: Date): Promise<StaleUploadSweep>;
}

function conditionOf(options: PutOptions): WriteCondition | undefined {
  return options.ifNoneMatch ? "if-none-match" : options.ifMatch !== undefined ? "if-match" : undefined;
}

export function createS3Store(options: S3StoreOptions): S3Store {
  const client = createS3Client(options);
  const bucket = options.bucket;
  const prefix = normalizePrefix(options.prefix);
  const partSizeBytes = Math.max(options.partSizeBytes ?? DEFAULT_PART_SIZE, MIN_PART_SIZE);
  const queueSize = Math.max(1, options.queueSize ?? DEFAULT_QUEUE_SIZE);
  const buffers = new PartBuffers(partSizeBytes, queueSize);
  const requestTimeoutMs = options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
  const location: StoreLocation = { scheme: "s3", bucket, prefix };
  const abs = (key: string) => fullKey(prefix, assertSafeKey(key));
  const ctx = (operation: string, key?: string, condition?: WriteCondition) => ({
    operation,
    bucket,
    ...(key !== undefined && { key: fullKey(prefix, key) }),
    ...(options.endpoint !== undefined && { endpoint: options.endpoint }),
    ...(condition !== undefined && { condition }),
  });
  const openUploads = trackOpenUploads(client);
  const probeKeys = new Set<string>();
  let stopping = false;
  // The proof while it runs: close() lets it finish (stopped midway, it would leave its probe upload behind).
  let proof: Promise<void> | undefined;
  // Whether the proof found UploadPartCopy's source pin enforced; unknown (not proved: the single-writer opt-out) counts as yes.
  let partCopyPinned: boolean | undefined;
  const writable = writeGuard(
    options.conditionalWrites ?? "prove",
    () => proof = cleanUpOnSignal(
      async () => {
        const proved = await proveConditionalWrites({
          client, bucket, prefix, endpoint: options.endpoint,
          onKey: (key, present) => void (present ? probeKeys.add(key) : probeKeys.delete(key)),
          stopped: () => stopping,
        });
        partCopyPinned = proved.partCopyPinned;
      },
      () => abortInFlight(),
    ),
    options.onWarning ?? ((m) => process.stderr.write(`relcast: warning: ${m}\n`)),
  );
  // PreconditionFailedError carries the store-relative key the caller used.
  const rekey = (err: Error, key: string) => (err instanceof PreconditionFailedError ? new PreconditionFailedError(key, err.condition) : err);

  async function head(key: string): Promise<ObjectMeta | undefined> {
    try {
      return metaFromHeaders(key, await client.send(new HeadObjectCommand({ Bucket: bucket, Key: abs(key) })));
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw mapS3Error(err, ctx("HeadObject", key));
    }
  }

  async function getStream(key: string, range?: ByteRange): Promise<{ stream: Readable; meta: ObjectMeta } | undefined> {
    try {
      const res = await client.send(
        new GetObjectCommand({ Bucket: bucket, Key: abs(key), ...(range && { Range: `bytes=${range.start}-${range.end}` }) }),
      );
      return { stream: res.Body as Readable, meta: metaFromHeaders(key, res) };
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw mapS3Error(err, ctx("GetObject", key));
    }
  }

  async function get(key: string): Promise<{ body: Buffer; meta: ObjectMeta } | undefined> {
    try {
      const res = await client.send(new GetObjectCommand({ Bucket: bucket, Key: abs(key) }));
      const bytes = res.Body ? await res.Body.transformToByteArray() : new Uint8Array();
      return { body: Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength), meta: metaFromHeaders(key, res) };
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw mapS3Error(err, ctx("GetObject", key));
    }
  }

  // Uploads started before their put (stage), by store-relative key; each is completed by that put or aborted.
  const staged = new Map<string, Promise<StagedUpload | undefined>>();
  // Completes of staged uploads in flight: a stop waits for them and says what they made.
  const completing = new Map<string, Promise<unknown>>();
  // Once the run is stopping (Ctrl-C, SIGTERM), no new write starts: the interrupt handler ends the process.
  const unlessStopping = async () => {
    if (stopping) await new Promise<never>(() => undefined);
  };
  // Resolved when the run stops: a stage still waiting for the proof (which never answers once stopping) gives up.
  let stopStaging!: () => void;
  const stagingStopped = new Promise<void>((resolve) => (stopStaging = resolve));

  function stage(key: string, file: string, opts: Pick<PutOptions, "contentType" | "cacheControl">): void {
    if (stopping || staged.has(key)) return;
    const Key = abs(key);
    const started = (async () => {
      await Promise.race([writable(), stagingStopped]);
      if (stopping) return undefined;
      const { size } = await stat(file);
      // A file of one part gains nothing: its put is one request anyway. An object already there (a re-run after an
      // interrupted upload step) is one the plan will not put again: sending its bytes would be for nothing.
      if (size <= partSizeBytes || stopping || (await head(key))) return undefined;
      return stageUpload({
        client, bucket, key: Key, file, size, contentType: opts.contentType, partSizeBytes, queueSize, buffers, progressKey: key, requestTimeoutMs,
        ...(opts.cacheControl !== undefined && { cacheControl: opts.cacheControl }),
        ...(options.onProgress !== undefined && { onProgress: options.onProgress }),
      });
    })().catch(() => undefined);
    staged.set(key, started);
  }

  /**
   * Completes the upload staged for this put, if there is one of the same
   * file and headers: the put's condition is applied by
   * CompleteMultipartUpload. A lost condition is the put's answer; any other
   * failure (a part that could not be sent) falls back to a plain upload.
   */
  async function completeStaged(key: string, file: string, opts: PutOptions): Promise<{ etag: string } | undefined> {
    const pending = staged.get(key);
    if (!pending) return undefined;
    staged.delete(key);
    const upload = await pending;
    if (!upload) return undefined;
    if (upload.file !== file || upload.contentType !== opts.contentType || upload.cacheControl !== opts.cacheControl) {
      await upload.abort();
      return undefined;
    }
    await unlessStopping();
    const completed = upload.complete({ ...(opts.ifNoneMatch !== undefined && { ifNoneMatch: opts.ifNoneMatch }), ...(opts.ifMatch !== undefined && { ifMatch: opts.ifMatch }) });
    completing.set(key, completed);
    try {
      return await completed;
    } catch (err) {
      await upload.abort();
      const mapped = rekey(mapS3Error(err, ctx("CompleteMultipartUpload", key, conditionOf(opts))), key);
      if (mapped instanceof PreconditionFailedError) throw mapped;
      return undefined;
    } finally {
      completing.delete(key);
    }
  }

  async function put(key: string, body: PutBody, opts: PutOptions): Promise<{ etag: string }> {
    const condition = conditionOf(opts);
    const Key = abs(key);
    await writable();
    await unlessStopping();
    try {
      if (typeof body === "object" && !Buffer.isBuffer(body)) {
        const completed = await completeStaged(key, body.file, opts);
        if (completed) return completed;
        return await uploadFile({
          client, bucket, key: Key, file: body.file, contentType: opts.contentType, partSizeBytes, queueSize, buffers, progressKey: key, requestTimeoutMs,
          ...(opts.cacheControl !== undefined && { cacheControl: opts.cacheControl }),
          ...(opts.ifNoneMatch !== undefined && { ifNoneMatch: opts.ifNoneMatch }),
          ...(opts.ifMatch !== undefined && { ifMatch: opts.ifMatch }),
          ...(options.onProgress !== undefined && { onProgress: options.onProgress }),
        });
      }
      const res = await client.send(
        new PutObjectCommand({
          Bucket: bucket, Key, Body: body, ContentType: opts.contentType,
          ...(opts.cacheControl !== undefined && { CacheControl: opts.cacheControl }),
          ...(opts.ifNoneMatch !== undefined && { IfNoneMatch: opts.ifNoneMatch }),
          ...(opts.ifMatch !== undefined && { IfMatch: opts.ifMatch }),
        }),
      );
      return { etag: res.ETag ?? "" };
    } catch (err) {
      throw rekey(mapS3Error(err, ctx("PutObject", key, condition)), key);
    }
  }

  async function copy(fromKey: string, toKey: string, opts: PutOptions, known?: CopySourceMeta): Promise<{ etag: string }> {
    const condition = conditionOf(opts);
    await writable();
    await unlessStopping();
    // Some S3-compatible servers (moto, older MinIO) ignore conditions on
    // CopyObject; a HEAD first gives them at least the sequential guarantee.
    if (condition) {
      const current = await head(toKey);
      if (opts.ifNoneMatch && current) throw new PreconditionFailedError(toKey, "if-none-match");
      if (opts.ifMatch !== undefined && current?.etag !== opts.ifMatch) throw new PreconditionFailedError(toKey, "if-match");
    }
    // The size chooses one CopyObject or parts, the ETag pins the version copied: a caller that knows both (it
    // wrote the source, or has just read it) spares the HEAD; a wrong guess fails the copy, never mixes versions.
    const source = known ?? (await head(fromKey));
    if (!source) throw new Error(`cannot copy ${fullKey(prefix, fromKey)} to ${toKey}: the source object does not exist`);
    try {
      return await copyObject({
        client, bucket, fromKey: abs(fromKey), toKey: abs(toKey), size: source.size, sourceEtag: source.etag, contentType: opts.contentType, queueSize,
        cacheControl: opts.cacheControl, ifNoneMatch: opts.ifNoneMatch, ifMatch: opts.ifMatch,
        multipartAbove: options.multipartCopyAboveBytes, partBytes: options.copyPartBytes, singleCopyUpTo: options.maxSingleCopyBytes,
        partCopyPinned: partCopyPinned !== false,
        requestTimeoutMs,
        gate: unlessStopping,
        // A stop waits for the request that makes the object and says whether it did (abortInFlight).
        finishing: (made) => {
          completing.set(toKey, made);
          void made.then(() => completing.delete(toKey), () => completing.delete(toKey));
        },
      });
    } catch (err) {
      throw rekey(mapS3Error(err, ctx(`Copy from ${fullKey(prefix, fromKey)} to`, toKey, condition)), toKey);
    }
  }

  async function* list(listPrefix: string): AsyncIterable<ObjectMeta> {
    const root = prefix === "" ? "" : `${prefix}/`;
    let token: string | undefined;
    do {
      let page;
      try {
        page = await client.send(
          new ListObjectsV2Command({ Bucket: bucket, Prefix: root + listPrefix, ...(token !== undefined && { ContinuationToken: token }) }),
        );
      } catch (err) {
        throw mapS3Error(err, ctx("ListObjectsV2", listPrefix));
      }
      for (const o of page.Contents ?? []) {
        if (!o.Key) continue;
        yield { key: o.Key.slice(root.length), size: o.Size ?? 0, etag: o.ETag ?? "", lastModified: o.LastModified ?? new Date(0) };
      }
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token !== undefined);
  }

  async function remove(key: string): Promise<void> {
    const Key = abs(key);
    await writable();
    await unlessStopping();
    try {
      await client.send(new DeleteObjectCommand({ Bucket: bucket, Key }));
    } catch (err) {
      if (isNotFound(err)) return;
      throw mapS3Error(err, ctx("DeleteObject", key));
    }
  }

  async function checkReachable(): Promise<void> {
    try {
      await client.send(new HeadBucketCommand({ Bucket: bucket }));
    } catch (err) {
      throw mapS3Error(err, ctx("HeadBucket"));
    }
  }

  /** Stops this run's uploads, aborts every multipart upload it opened and removes its probe key, if one is there. */
  async function abortInFlight(): Promise<string[]> {
    stopping = true;
    stopStaging();
    const stopped = stopActiveUploads();
    // Uploads staged ahead of their put: aborted here; one whose abort was lost is still the tracker's to abort.
    const unused = [...staged.entries()];
    staged.clear();
    const early: string[] = [];
    // A Complete already sent cannot be taken back: wait for it and say whether it made the object.
    await Promise.all([...completing.entries()].map(async ([key, done]) => {
      if (await done.then(() => true, () => false)) early.push(`${fullKey(prefix, key)} was being completed when the run stopped: that object is in the store`);
    }));
    await Promise.all(unused.map(async ([key, pending]) => {
      const upload = await pending;
      if (upload && (await upload.abort())) early.push(`aborted the multipart upload of ${fullKey(prefix, key)} (started before the upload step)`);
    }));
    const lines = [...early, ...(await openUploads.abortAll())];
    for (const key of [...probeKeys]) {
      await client.send(new DeleteObjectCommand({ Bucket: bucket, Key: key })).then(
        () => lines.push(`removed the conditional-write probe ${key}`),
        () => lines.push(`could not remove the conditional-write probe ${key}; relcast gc removes it`),
      );
      probeKeys.delete(key);
    }
    if (stopped.length > 0 && lines.length === 0) lines.push(...stopped.map((k) => `stopped the upload of ${k}`));
    return lines;
  }

  return {
    location,
    uriFor: (key) => `s3://${bucket}/${abs(key)}`,
    head, get, getStream, put, stage, copy, list, delete: remove, checkReachable,
    proveConditionalWrites: writable,
    abortInFlight,
    abortStaleUploads: (olderThan) => abortStaleMultipartUploads(client, bucket, prefix, olderThan),
    async sweepIncomplete(olderThan) {
      const sweep = await abortStaleMultipartUploads(client, bucket, prefix, olderThan);
      const probes = await removeStaleProbes(client, bucket, prefix, olderThan);
      return [
        ...sweep.aborted.map((a) => `incomplete multipart upload of ${a.key} (started ${a.initiated?.toISOString() ?? "unknown"})`),
        ...probes.map((key) => `conditional-write probe ${key}`),
      ];
    },
    async close() {
      // (Once stopping, the proof never answers: abortInFlight has already cleaned up.)
      if (!stopping) await proof?.catch(() => undefined);
      // A run that failed (or forgot) with an upload open: abort it before the client goes.
      if (openUploads.size > 0 || staged.size > 0) await abortInFlight();
      // A CreateMultipartUpload whose answer was lost and retried may have opened an upload no one knows the id of.
      else if (openUploads.uncertain > 0) await openUploads.abortAll();
      client.destroy();
    },
  };
}
