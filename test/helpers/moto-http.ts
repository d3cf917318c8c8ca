import { createHash } from "node:crypto";
import { XMLParser } from "fast-xml-parser";

/**
 * A bucket read over plain HTTP, straight from the S3 server (moto checks
 * no signature): what the tests check the store with, independent of
 * relcast's store code and of any SDK, and with no process to start (an
 * `aws` command cost a Python start per check, seconds each on a loaded
 * machine). Every answer must be a 2xx of the expected kind and a listing
 * must be complete (not truncated): an error can never read as "empty".
 */
export interface BucketReader {
  /** ListMultipartUploads: the uploads open in the bucket. */
  uploads(): Promise<Array<{ Key: string; UploadId: string }>>;
  /** ListParts of one upload (moto names its answer ListPartsResponse, S3 ListPartsResult). */
  parts(key: string, uploadId: string): Promise<Array<{ PartNumber: number; Size: number }>>;
  /** ListObjectsV2 under a prefix. */
  objects(prefix: string): Promise<Array<{ Key: string; Size: number }>>;
  /** HeadObject: the headers a client gets. */
  head(key: string): Promise<{ ContentType: string | null; CacheControl: string | null; ContentLength: number }>;
  /** GetObject: the bytes' SHA-256 (hex). */
  sha256(key: string): Promise<string>;
  /** GetObject: the bytes as UTF-8. */
  text(key: string): Promise<string>;
}

// moto checks no signature, but serves an object whose ACL is private (release.json) only to a request that names
// credentials: the test credentials' access key, as the SDK would send it.
const AUTHORIZATION = "AWS4-HMAC-SHA256 Credential=test/20260101/us-east-1/s3/aws4_request, SignedHeaders=host, Signature=0";

const xml = new XMLParser({ parseTagValue: false, isArray: (name) => ["Upload", "Part", "Contents"].includes(name) });

export function bucketReader(endpoint: string, bucket: string): BucketReader {
  const url = (key: string, query = "") => `${endpoint}/${bucket}/${key.split("/").map(encodeURIComponent).join("/")}${query}`;
  const request = async (target: string, method = "GET"): Promise<Response> => {
    const res = await fetch(target, { method, headers: { authorization: AUTHORIZATION } });
    if (!res.ok) throw new Error(`${method} ${target}: HTTP ${res.status} ${await res.text()}`);
    return res;
  };
  const listing = async (target: string, roots: readonly string[], items: string): Promise<Array<Record<string, string>>> => {
    const body = await (await request(target)).text();
    const parsed = xml.parse(body);
    const doc = roots.map((root) => parsed[root]).find((d) => d !== undefined);
    if (doc === undefined) throw new Error(`GET ${target}: not a ${roots.join(" or ")}: ${body.slice(0, 300)}`);
    if (doc.IsTruncated === "true") throw new Error(`GET ${target}: listing truncated (the tests' listings are small; this reader does not page)`);
    return doc[items] ?? [];
  };
  return {
    uploads: async () => (await listing(`${endpoint}/${bucket}?uploads`, ["ListMultipartUploadsResult"], "Upload")).map((u) => ({ Key: u.Key!, UploadId: u.UploadId! })),
    parts: async (key, uploadId) =>
      (await listing(url(key, `?uploadId=${encodeURIComponent(uploadId)}`), ["ListPartsResult", "ListPartsResponse"], "Part")).map((p) => ({ PartNumber: Number(p.PartNumber), Size: Number(p.Size) })),
    objects: async (prefix) =>
      (await listing(`${endpoint}/${bucket}?list-type=2&prefix=${encodeURIComponent(prefix)}`, ["ListBucketResult"], "Contents")).map((o) => ({ Key: o.Key!, Size: Number(o.Size) })),
    head: async (key) => {
      const res = await request(url(key), "HEAD");
      return { ContentType: res.headers.get("content-type"), CacheControl: res.headers.get("cache-control"), ContentLength: Number(res.headers.get("content-length")) };
    },
    sha256: async (key) => createHash("sha256").update(Buffer.from(await (await request(url(key))).arrayBuffer())).digest("hex"),
    text: async (key) => (await request(url(key))).text(),
  };
}
