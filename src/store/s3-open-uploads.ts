import { AbortMultipartUploadCommand, ListPartsCommand, type S3Client } from "@aws-sdk/client-s3";
import { isNotFound } from "./s3-errors.js";

interface OpenUpload {
  bucket: string;
  key: string;
  uploadId: string;
}

/** The multipart uploads one S3 client started and has neither completed nor aborted. */
export interface OpenUploads {
  /** How many are open now (for tests and messages). */
  readonly size: number;
  /**
   * Aborts every open one, after waiting for the CreateMultipartUpload
   * requests still in flight (so an upload whose id has not arrived yet is
   * aborted too), and checks with ListParts that no part survived (S3: a part
   * still uploading during the abort may land; abort again). Gives up after
   * `waitMs`. One line per upload aborted.
   */
  abortAll(waitMs?: number): Promise<string[]>;
}

type Input = { Bucket?: string; Key?: string; UploadId?: string };
const ABORT_ROUNDS = 3;

/**
 * Watches every request of `client` (a middleware, so whoever starts a
 * multipart upload through it, a file upload or the conditional-write probe,
 * is seen): an upload is open from CreateMultipartUpload's answer until a
 * Complete or Abort succeeds. An interrupted or failing run aborts what is
 * open, instead of leaving parts S3 bills until a lifecycle rule runs.
 */
export function trackOpenUploads(client: S3Client): OpenUploads {
  const open = new Map<string, OpenUpload>();
  const creating = new Set<Promise<unknown>>();
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const input = args.input as Input;
      const command = context.commandName;
      if (command === "CreateMultipartUploadCommand") {
        const pending = next(args);
        creating.add(pending);
        try {
          const res = await pending;
          const uploadId = (res.output as { UploadId?: string }).UploadId;
          if (uploadId && input.Bucket && input.Key) open.set(uploadId, { bucket: input.Bucket, key: input.Key, uploadId });
          return res;
        } finally {
          creating.delete(pending);
        }
      }
      const res = await next(args);
      if ((command === "CompleteMultipartUploadCommand" || command === "AbortMultipartUploadCommand") && input.UploadId) open.delete(input.UploadId);
      return res;
    },
    { step: "initialize", name: "relcastOpenUploads" },
  );

  /** True once S3 knows the upload no more (NoSuchUpload), after up to ABORT_ROUNDS aborts. */
  async function abortOne(u: OpenUpload): Promise<boolean> {
    for (let round = 0; round < ABORT_ROUNDS; round++) {
      try {
        await client.send(new AbortMultipartUploadCommand({ Bucket: u.bucket, Key: u.key, UploadId: u.uploadId }));
      } catch (err) {
        if (!isNotFound(err)) throw err;
      }
      open.delete(u.uploadId);
      try {
        const parts = await client.send(new ListPartsCommand({ Bucket: u.bucket, Key: u.key, UploadId: u.uploadId }));
        if ((parts.Parts ?? []).length === 0) return true;
      } catch (err) {
        if (isNotFound(err)) return true;
        throw err;
      }
    }
    return false;
  }

  async function abortAll(waitMs = 10_000): Promise<string[]> {
    const lines: string[] = [];
    const work = (async () => {
      await Promise.allSettled([...creating]);
      await Promise.all([...open.values()].map(async (u) => {
        const gone = await abortOne(u).catch(() => false);
        lines.push(gone ? `aborted the multipart upload of ${u.key}` : `could not abort the multipart upload of ${u.key} (id ${u.uploadId}); relcast gc or a lifecycle rule removes it`);
      }));
    })();
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([work, new Promise((r) => (timer = setTimeout(r, waitMs)))]);
    clearTimeout(timer);
    return lines;
  }

  return {
    get size() {
      return open.size + creating.size;
    },
    abortAll,
  };
}
