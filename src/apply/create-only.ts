import { digestStream } from "../core/file-digest.js";
import { PreconditionFailedError, RelcastError } from "../core/errors.js";
import type { PutWrite } from "../domain/release-plan.js";
import { headerFixCommand, servedHeaderDifferences } from "../store/header-fix.js";
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
 * A create-only write (If-None-Match: *) of a versioned object. Losing the
 * race is no conflict when the winner wrote the same bytes (a concurrent
 * identical run, or a re-run): the object is kept, and returns undefined.
 * Same bytes with other headers (another Content-Type or Cache-Control, or
 * one relcast never writes, such as Content-Encoding) is refused, with
 * nothing changed: the object may be the release of a run that won the race
 * (another cacheControl setting), and rewriting its headers would change its
 * ETag under that run's pinned copies and leave the loser's headers on the
 * winner's release. A run never changes an object another run may own; the
 * error names the copy that fixes the headers for the one who owns it.
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
        const wrong = servedHeaderDifferences(t.target, stored.meta, options);
        if (wrong.length === 0) {
          t.log(`${w.key} was written meanwhile with the same bytes; keeping it`);
          return undefined;
        }
        throw new RelcastError(
          "E_CONFLICT",
          `${t.target.uriFor(w.key)} is already there with the same bytes but ${wrong.join(" and ")}; relcast left it as it is, since another run may own it`,
          `if another run published this version meanwhile, this run lost the race: check the catalog. If the release is yours (an upload by hand, a run with another cacheControl setting), give it relcast's headers without changing a byte, then run again: ${headerFixCommand(t.target, w.key, options)}`,
        );
      }
      if (w.sha256 && stored === undefined && attempt < 10) {
        await new Promise((r) => setTimeout(r, 100 * attempt + Math.random() * 100));
        continue;
      }
      throw new RelcastError("E_CONFLICT", `${w.key} was created by another run while this one ran`, "another pipeline published this version; check the catalog and bump the version if needed");
    }
  }
}
