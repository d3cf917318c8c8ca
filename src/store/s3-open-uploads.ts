import { AbortMultipartUploadCommand, ListMultipartUploadsCommand, ListPartsCommand, type S3Client } from "@aws-sdk/client-s3";
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
  /** Keys a CreateMultipartUpload may have opened an upload for whose id never came back (see {@link trackOpenUploads}). */
  readonly uncertain: number;
  /**
   * Aborts every open one, after waiting for the CreateMultipartUpload
   * requests still in flight (so an upload whose id has not arrived yet is
   * aborted too), and checks with ListParts that no part survived (S3: a part
   * still uploading during the abort may land; abort again). Then, for each
   * key whose CreateMultipartUpload was retried or failed, lists that key's
   * uploads and aborts those this client started but never learnt of.
   * Gives up after `waitMs`. One line per upload aborted.
   */
  abortAll(waitMs?: number): Promise<string[]>;
}

type Input = { Bucket?: string; Key?: string; UploadId?: string };
const ABORT_ROUNDS = 3;

/** The attempts the SDK made (its retries included), from an answer's or an error's metadata. */
const attemptsOf = (x: unknown): number => (x as { $metadata?: { attempts?: number } } | undefined)?.$metadata?.attempts ?? 1;

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
  const uncertain = new Map<string, { bucket: string; key: string }>();
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const input = args.input as Input;
      const command = context.commandName;
      if (command === "CreateMultipartUploadCommand") {
        const pending = next(args);
        creating.add(pending);
        // An attempt whose answer was lost (and retried, or failed) may still have opened an upload on S3's side.
        const mayHaveOpened = () => {
          if (input.Bucket && input.Key && !uncertain.has(`${input.Bucket}\n${input.Key}`)) uncertain.set(`${input.Bucket}\n${input.Key}`, { bucket: input.Bucket, key: input.Key });
        };
        try {
          const res = await pending;
          const uploadId = (res.output as { UploadId?: string }).UploadId;
          if (uploadId && input.Bucket && input.Key) open.set(uploadId, { bucket: input.Bucket, key: input.Key, uploadId });
          if (attemptsOf(res.output) > 1) mayHaveOpened();
          return res;
        } catch (err) {
          mayHaveOpened();
          throw err;
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

  /**
   * The uploads of `key` this client may have opened without learning their
   * id: every upload of exactly that key but the open ones it knows. Not
   * filtered by Initiated (S3 clocks skew, moto stamps a fixed date): the
   * keys relcast uploads in parts are a version's objects, written
   * create-only, and a random probe key, so another live upload of the same
   * key is a race one of the two loses anyway, and an older one is what a
   * killed run left for `relcast gc`.
   */
  async function strays(u: { bucket: string; key: string }): Promise<OpenUpload[]> {
    const found: OpenUpload[] = [];
    let keyMarker: string | undefined;
    let uploadIdMarker: string | undefined;
    do {
      const page = await client.send(new ListMultipartUploadsCommand({ Bucket: u.bucket, Prefix: u.key, KeyMarker: keyMarker, UploadIdMarker: uploadIdMarker }));
      for (const up of page.Uploads ?? []) {
        if (up.Key !== u.key || !up.UploadId || open.has(up.UploadId)) continue;
        found.push({ bucket: u.bucket, key: u.key, uploadId: up.UploadId });
      }
      const more = page.IsTruncated === true;
      keyMarker = more ? page.NextKeyMarker : undefined;
      uploadIdMarker = more ? page.NextUploadIdMarker : undefined;
    } while (keyMarker !== undefined);
    return found;
  }

  async function abortAll(waitMs = 10_000): Promise<string[]> {
    const lines: string[] = [];
    const work = (async () => {
      await Promise.allSettled([...creating]);
      await Promise.all([...open.values()].map(async (u) => {
        const gone = await abortOne(u).catch(() => false);
        lines.push(gone ? `aborted the multipart upload of ${u.key}` : `could not abort the multipart upload of ${u.key} (id ${u.uploadId}); relcast gc or a lifecycle rule removes it`);
      }));
      await Promise.all([...uncertain.entries()].map(async ([id, u]) => {
        const found = await strays(u).catch(() => undefined);
        if (!found) {
          lines.push(`could not list the multipart uploads of ${u.key} (an answer to starting one was lost); relcast gc or a lifecycle rule removes any left`);
          return;
        }
        for (const s of found) {
          const gone = await abortOne(s).catch(() => false);
          lines.push(gone ? `aborted the multipart upload of ${s.key} whose start was answered too late` : `could not abort the multipart upload of ${s.key} (id ${s.uploadId}); relcast gc or a lifecycle rule removes it`);
        }
        uncertain.delete(id);
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
    get uncertain() {
      return uncertain.size;
    },
    abortAll,
  };
}
