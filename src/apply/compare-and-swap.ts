import { PreconditionFailedError, RelcastError } from "../core/errors.js";

export const CAS_ATTEMPTS = 60;

/** Jittered exponential backoff after a lost race. */
async function backoff(attempt: number): Promise<void> {
  const ms = Math.min(1000, 10 * 2 ** Math.min(attempt, 7));
  await new Promise((r) => setTimeout(r, ms / 2 + Math.random() * ms));
}

/**
 * The one compare-and-swap loop. `plan` reads the store and returns the
 * writes (each conditional on the ETag it read); `apply` carries them out.
 * When a conditional write loses (PreconditionFailedError: someone wrote in
 * between), the writes are planned again by the same code from what is
 * there now, after a jittered backoff, so concurrent writers never
 * overwrite each other's changes. Returns the plan that was applied.
 */
export async function compareAndSwap<P>(what: string, plan: (attempt: number) => Promise<P>, apply: (planned: P) => Promise<void>, first?: P): Promise<P> {
  for (let attempt = 1; attempt <= CAS_ATTEMPTS; attempt++) {
    try {
      const planned = attempt === 1 && first !== undefined ? first : await plan(attempt);
      await apply(planned);
      return planned;
    } catch (err) {
      if (!(err instanceof PreconditionFailedError)) throw err;
      await backoff(attempt);
    }
  }
  throw new RelcastError("E_STORE", `gave up updating ${what} after ${CAS_ATTEMPTS} lost races`, "too many writers at once; run the command again (it resumes where it stopped)");
}
