import { PreconditionFailedError, RelcastError } from "../core/errors.js";
import type { ObjectStore, PutOptions } from "./object-store.js";

export const CAS_ATTEMPTS = 60;

/** Jittered exponential backoff after a lost race. */
export async function casBackoff(attempt: number): Promise<void> {
  const backoff = Math.min(1000, 10 * 2 ** Math.min(attempt, 7));
  await new Promise((r) => setTimeout(r, backoff / 2 + Math.random() * backoff));
}

export function casGaveUp(key: string): RelcastError {
  return new RelcastError("E_STORE", `gave up updating ${key} after ${CAS_ATTEMPTS} lost races`, "too many publishes at once; re-run this publish (it resumes where it stopped)");
}

/**
 * Read-modify-write of one object with If-Match (If-None-Match:* when it does
 * not exist yet). On a lost race it re-reads and recomputes, with jittered
 * backoff, so concurrent writers never overwrite each other's changes.
 */
export async function compareAndSwap(
  store: ObjectStore,
  key: string,
  compute: (current: Buffer | undefined) => Promise<string | Buffer | undefined> | string | Buffer | undefined,
  options: Omit<PutOptions, "ifMatch" | "ifNoneMatch">,
): Promise<{ written: boolean; attempts: number }> {
  for (let attempt = 1; attempt <= CAS_ATTEMPTS; attempt++) {
    const current = await store.get(key);
    const next = await compute(current?.body);
    if (next === undefined) return { written: false, attempts: attempt };
    if (current && Buffer.from(next).equals(current.body)) return { written: false, attempts: attempt };
    try {
      await store.put(key, next, current ? { ...options, ifMatch: current.meta.etag } : { ...options, ifNoneMatch: "*" });
      return { written: true, attempts: attempt };
    } catch (err) {
      if (!(err instanceof PreconditionFailedError)) throw err;
      await casBackoff(attempt);
    }
  }
  throw casGaveUp(key);
}
