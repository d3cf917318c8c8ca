import { Readable } from "node:stream";
import { readZipListing, type RangeSource } from "../sparkle/zip-listing.js";
import type { ObjectStore } from "../store/object-store.js";

/** `<bundle>/Contents/Info.plist` inside an update zip (the bundle is the zip's one top folder). */
export const ZIP_INFO_PLIST = /^[^/]+\/Contents\/Info\.plist$/;

/** A store object read as a zip by ranges; `etag` must stay the same across the reads. */
export function storeRanges(store: ObjectStore, key: string, size: number, etag: string): RangeSource {
  return {
    size,
    async openRange(start, end) {
      if (end <= start) return Readable.from([]);
      const got = await store.getStream(key, { start, end: end - 1 });
      if (!got) throw new Error(`${key} disappeared while it was read`);
      if (got.meta.etag !== etag) {
        got.stream.destroy();
        throw new Error(`${key} changed while it was read`);
      }
      return got.stream;
    },
  };
}

/**
 * The Info.plist bytes of a published release's bundle, read from its
 * update zip in the store by ranges (the central directory and one entry:
 * a few KiB whatever the zip's size). Undefined when the zip or the plist
 * is missing.
 */
export async function readStoredInfoPlist(store: ObjectStore, zipKey: string): Promise<Buffer | undefined> {
  const head = await store.head(zipKey);
  if (!head) return undefined;
  const listing = await readZipListing(storeRanges(store, zipKey, head.size, head.etag), (name) => ZIP_INFO_PLIST.test(name));
  return [...listing.files.values()][0];
}
