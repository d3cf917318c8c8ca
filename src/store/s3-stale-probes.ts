import { DeleteObjectCommand, ListObjectsV2Command, type S3Client } from "@aws-sdk/client-s3";
import { PROBE_PREFIX } from "./s3-conditional-probe.js";
import { fullKey } from "./s3-options.js";

/**
 * Removes conditional-write probe keys (`<prefix>/.relcast/probe/…`) older
 * than `olderThan`: a run killed with SIGKILL during its probe leaves its key
 * (a few bytes). Returns the full keys removed. For `relcast gc`.
 */
export async function removeStaleProbes(client: S3Client, bucket: string, prefix: string, olderThan: Date): Promise<string[]> {
  const removed: string[] = [];
  let token: string | undefined;
  do {
    const page = await client.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: fullKey(prefix, PROBE_PREFIX), ...(token !== undefined && { ContinuationToken: token }) }));
    for (const o of page.Contents ?? []) {
      if (!o.Key || (o.LastModified && o.LastModified >= olderThan)) continue;
      await client.send(new DeleteObjectCommand({ Bucket: bucket, Key: o.Key }));
      removed.push(o.Key);
    }
    token = page.IsTruncated ? page.NextContinuationToken : undefined;
  } while (token !== undefined);
  return removed;
}
