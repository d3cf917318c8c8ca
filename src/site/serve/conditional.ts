import type { ObjectMeta } from "../../store/object-store.js";
import { parseHttpDate } from "../../core/http-date.js";

/** ETags as sent: always quoted (S3 quotes them; a bare value is quoted here). */
export function quotedEtag(etag: string): string {
  return /^(W\/)?".*"$/.test(etag) ? etag : `"${etag}"`;
}

function opaque(tag: string): string {
  return tag.trim().replace(/^W\//, "");
}

/** If-None-Match (weak comparison) wins over If-Modified-Since, as RFC 9110 §13.2.2 orders them. */
export function notModified(headers: { "if-none-match"?: string | undefined; "if-modified-since"?: string | undefined }, meta: ObjectMeta): boolean {
  const etag = opaque(quotedEtag(meta.etag));
  const inm = headers["if-none-match"];
  if (inm !== undefined) return inm.trim() === "*" || inm.split(",").some((t) => opaque(t) === etag);
  const ims = headers["if-modified-since"];
  if (ims === undefined) return false;
  const since = parseHttpDate(ims.trim());
  return since.ok && Math.floor(meta.lastModified.getTime() / 1000) * 1000 <= since.date.getTime();
}

/** If-Range: the range applies only when the validator still matches (strong ETag or exact date). */
export function rangeStillValid(ifRange: string | undefined, meta: ObjectMeta): boolean {
  if (ifRange === undefined) return true;
  const value = ifRange.trim();
  if (value.startsWith('"') || value.startsWith("W/")) return !value.startsWith("W/") && value === quotedEtag(meta.etag);
  const date = parseHttpDate(value);
  return date.ok && Math.floor(meta.lastModified.getTime() / 1000) * 1000 === date.date.getTime();
}
