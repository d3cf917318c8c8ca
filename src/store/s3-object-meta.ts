import type { ObjectMeta } from "./object-store.js";

/** The header fields HeadObject and GetObject share. */
export interface S3ObjectHeaders {
  ETag?: string | undefined;
  ContentLength?: number | undefined;
  ContentRange?: string | undefined;
  LastModified?: Date | undefined;
  ContentType?: string | undefined;
  CacheControl?: string | undefined;
  ContentEncoding?: string | undefined;
  ContentDisposition?: string | undefined;
  WebsiteRedirectLocation?: string | undefined;
}

/**
 * Builds ObjectMeta from response headers. For a ranged GET the size is the
 * whole object's (from Content-Range `bytes a-b/total`), not the slice's.
 */
export function metaFromHeaders(key: string, h: S3ObjectHeaders): ObjectMeta {
  const total = h.ContentRange ? Number(h.ContentRange.split("/")[1]) : NaN;
  return {
    key,
    size: Number.isFinite(total) ? total : (h.ContentLength ?? 0),
    etag: h.ETag ?? "",
    lastModified: h.LastModified ?? new Date(0),
    ...(h.ContentType !== undefined && { contentType: h.ContentType }),
    ...(h.CacheControl !== undefined && { cacheControl: h.CacheControl }),
    ...(h.ContentEncoding !== undefined && { contentEncoding: h.ContentEncoding }),
    ...(h.ContentDisposition !== undefined && { contentDisposition: h.ContentDisposition }),
    ...(h.WebsiteRedirectLocation !== undefined && { websiteRedirectLocation: h.WebsiteRedirectLocation }),
  };
}

/** CopySource is `bucket/key`, URL-encoded per segment. */
export function copySource(bucket: string, key: string): string {
  return `${bucket}/${key.split("/").map(encodeURIComponent).join("/")}`;
}
