import type { StoreLocation } from "./object-store.js";
import { redactUrl } from "../core/redact-url.js";

/**
 * Where a store is, fully resolved, as a person checks it: the absolute
 * folder of a folder store (`file://./public-stroe` becomes
 * `/home/me/plugin/public-stroe`), the bucket and prefix of an S3 store and
 * its endpoint when it is not AWS's own. Used where a typo in a store URL
 * would otherwise go unseen.
 */
export function describeStoreLocation(location: StoreLocation, endpoint?: string): string {
  if (location.scheme === "file") return `the folder ${location.bucket}`;
  const url = `s3://${location.bucket}${location.prefix ? `/${location.prefix}` : ""}`;
  return endpoint ? `${url} at ${redactUrl(endpoint)}` : url;
}
