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

/** The headers relcast never writes that change what a client gets, by their HTTP names (see ObjectMeta.foreignHeaders). */
function foreignHeaders(h: S3ObjectHeaders): Record<string, string> | undefined {
  const found: Record<string, string> = {};
  const add = (name: string, value: string | undefined) => {
    if (value !== undefined && value !== "") found[name] = value;
  };
  // `identity` is no encoding at all; Content-Language changes no byte a client gets.
  if (h.ContentEncoding?.trim().toLowerCase() !== "identity") add("Content-Encoding", h.ContentEncoding);
  add("Content-Disposition", h.ContentDisposition);
  add("x-amz-website-redirect-location", h.WebsiteRedirectLocation);
  return Object.keys(found).length > 0 ? found : undefined;
}

/**
 * Builds ObjectMeta from response headers. For a ranged GET the size is the
 * whole object's (from Content-Range `bytes a-b/total`), not the slice's.
 */
export function metaFromHeaders(key: string, h: S3ObjectHeaders): ObjectMeta {
  const foreign = foreignHeaders(h);
  const total = h.ContentRange ? Number(h.ContentRange.split("/")[1]) : NaN;
  return {
    key,
    size: Number.isFinite(total) ? total : (h.ContentLength ?? 0),
    etag: h.ETag ?? "",
    lastModified: h.LastModified ?? new Date(0),
    ...(h.ContentType !== undefined && { contentType: h.ContentType }),
    ...(h.CacheControl !== undefined && { cacheControl: h.CacheControl }),
    ...(foreign && { foreignHeaders: foreign }),
  };
}

/** CopySource is `bucket/key`, URL-encoded per segment. */
export function copySource(bucket: string, key: string): string {
  return `${bucket}/${key.split("/").map(encodeURIComponent).join("/")}`;
}
