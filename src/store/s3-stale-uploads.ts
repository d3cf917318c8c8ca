import { AbortMultipartUploadCommand, ListMultipartUploadsCommand, type S3Client } from "@aws-sdk/client-s3";

export interface StaleUploadSweep {
  /** Keys (full, prefix included) whose incomplete uploads were aborted. */
  aborted: { key: string; uploadId: string; initiated: Date | undefined }[];
  /** Incomplete uploads younger than the cut-off, left alone. */
  kept: number;
}

/**
 * Aborts incomplete multipart uploads under `prefix` started before
 * `olderThan`. A run killed mid-upload leaves parts that are billed but never
 * visible; a lifecycle rule is the usual cure, this is the on-demand one
 * (for `relcast gc`). Uploads without an Initiated date count as stale.
 */
export async function abortStaleMultipartUploads(client: S3Client, bucket: string, prefix: string, olderThan: Date): Promise<StaleUploadSweep> {
  const sweep: StaleUploadSweep = { aborted: [], kept: 0 };
  let keyMarker: string | undefined;
  let uploadIdMarker: string | undefined;
  do {
    const page = await client.send(
      new ListMultipartUploadsCommand({
        Bucket: bucket,
        ...(prefix !== "" && { Prefix: `${prefix}/` }),
        ...(keyMarker !== undefined && { KeyMarker: keyMarker }),
        ...(uploadIdMarker !== undefined && { UploadIdMarker: uploadIdMarker }),
      }),
    );
    for (const upload of page.Uploads ?? []) {
      if (!upload.Key || !upload.UploadId) continue;
      if (upload.Initiated && upload.Initiated >= olderThan) {
        sweep.kept++;
        continue;
      }
      await client.send(new AbortMultipartUploadCommand({ Bucket: bucket, Key: upload.Key, UploadId: upload.UploadId }));
      sweep.aborted.push({ key: upload.Key, uploadId: upload.UploadId, initiated: upload.Initiated });
    }
    const more = page.IsTruncated === true;
    keyMarker = more ? page.NextKeyMarker : undefined;
    uploadIdMarker = more ? page.NextUploadIdMarker : undefined;
  } while (keyMarker !== undefined);
  return sweep;
}
