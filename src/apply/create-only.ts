import { digestStream } from "../core/file-digest.js";
import { PreconditionFailedError, RelcastError, SourceChangedError } from "../core/errors.js";
import type { PutWrite } from "../domain/release-plan.js";
import type { ObjectMeta, ObjectStore, PutBody, PutOptions } from "../store/object-store.js";

/** Where the create-only write logs and records what it did (a slice of the apply target). */
export interface CreateOnlyTarget {
  target: ObjectStore;
  log(line: string): void;
}

/** The stored object's SHA-256 and headers, read in one GET (so the headers are those of the bytes hashed). */
async function storedVersion(store: ObjectStore, key: string): Promise<{ sha256: string; meta: ObjectMeta } | undefined> {
  const got = await store.getStream(key);
  if (!got) return undefined;
  return { sha256: (await digestStream(got.stream)).sha256, meta: got.meta };
}

/**
 * The headers relcast would have written that the stored object lacks. The
 * folder store keeps none (it answers a Content-Type made from the name, and
 * a static server derives both the same way): nothing to compare there.
 */
function headerDifferences(store: ObjectStore, meta: ObjectMeta, options: PutOptions): string[] {
  if (store.location.scheme === "file") return [];
  const found: string[] = [];
  const show = (v: string | undefined) => (v === undefined ? "none" : JSON.stringify(v));
  if (meta.contentType !== options.contentType) found.push(`Content-Type ${show(meta.contentType)} (relcast writes ${show(options.contentType)})`);
  if (meta.cacheControl !== options.cacheControl) found.push(`Cache-Control ${show(meta.cacheControl)} (relcast writes ${show(options.cacheControl)})`);
  return found;
}

/**
 * A create-only write (If-None-Match: *) of a versioned object. Losing the
 * race is no conflict when the winner wrote the same bytes (a concurrent
 * identical run, or a re-run): the object is kept, and returns undefined.
 * Same bytes with other headers (another tool, an `aws s3 cp` by hand, a run
 * with another cacheControl setting) would stay so forever, since no later
 * run writes a versioned object again: its headers are rewritten in place, by
 * a copy onto itself pinned to the ETag of the very version hashed (the
 * store's copy names it as its source and as the target's If-Match), so not
 * a byte changes and a version replaced meanwhile is hashed again instead.
 * S3 answers 409 while a concurrent upload of the same key is still
 * completing: the object is not there yet, so wait and try again.
 */
export async function putCreateOnly(t: CreateOnlyTarget, w: PutWrite, body: PutBody, options: PutOptions): Promise<string | undefined> {
  for (let attempt = 1; ; attempt++) {
    try {
      return (await t.target.put(w.key, body, { ...options, ifNoneMatch: "*" })).etag;
    } catch (err) {
      if (!(err instanceof PreconditionFailedError)) throw err;
      const stored = w.sha256 ? await storedVersion(t.target, w.key) : undefined;
      if (w.sha256 && stored?.sha256 === w.sha256) {
        const wrong = headerDifferences(t.target, stored.meta, options);
        if (wrong.length === 0) {
          t.log(`${w.key} was written meanwhile with the same bytes; keeping it`);
          return undefined;
        }
        try {
          const { etag } = await t.target.copy(w.key, w.key, { ...options, ifMatch: stored.meta.etag }, { size: stored.meta.size, etag: stored.meta.etag });
          t.log(`${w.key} was written meanwhile with the same bytes but ${wrong.join(" and ")}; rewrote its headers in place (not a byte changed)`);
          return etag;
        } catch (copyErr) {
          // Replaced between the hash and the copy: hash the new version (below the attempt limit).
          if (!(copyErr instanceof PreconditionFailedError || copyErr instanceof SourceChangedError) || attempt >= 10) throw copyErr;
          continue;
        }
      }
      if (w.sha256 && stored === undefined && attempt < 10) {
        await new Promise((r) => setTimeout(r, 100 * attempt + Math.random() * 100));
        continue;
      }
      throw new RelcastError("E_CONFLICT", `${w.key} was created by another run while this one ran`, "another pipeline published this version; check the catalog and bump the version if needed");
    }
  }
}
