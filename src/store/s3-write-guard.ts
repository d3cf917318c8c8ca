/**
 * `prove` (the default): before the first write, the store must show it
 * refuses conditional writes that lose. `unverified-single-writer`: the
 * user's word that nothing else ever writes to the store; no proof, and
 * every writing run warns.
 */
export type ConditionalWritesMode = "prove" | "unverified-single-writer";

export const OPT_OUT_WARNING =
  'conditional writes are not verified for this store ("s3": { "conditionalWrites": "unverified-single-writer" }): ' +
  "if anything else ever writes to it at the same time (a second pipeline, a yank, a rebuild), releases can be lost from the catalog without an error";

/**
 * The check every write of one opened store waits for: run once, on the
 * first write, and remembered for as long as this store is open (one run).
 * Never across runs: what answers at the endpoint (a proxy, a gateway, the
 * service's own settings) can change between two runs. A failed proof is
 * not remembered, so every later write is refused again.
 */
export function writeGuard(mode: ConditionalWritesMode, prove: () => Promise<void>, warn: (message: string) => void): () => Promise<void> {
  let proved: Promise<void> | undefined;
  return () => {
    if (!proved) {
      if (mode === "unverified-single-writer") {
        warn(OPT_OUT_WARNING);
        proved = Promise.resolve();
      } else {
        proved = prove();
        proved.catch(() => (proved = undefined));
      }
    }
    return proved;
  };
}
