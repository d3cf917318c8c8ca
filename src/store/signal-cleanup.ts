const SIGNALS = ["SIGINT", "SIGTERM"] as const;

/**
 * While `fn` runs, a Ctrl-C or SIGTERM first runs `cleanup` (at most
 * `waitMs`), then takes its default course (the process ends by the
 * signal). Only where nothing else in the process handles the signal: a
 * publish has its own handler (release/interrupt.ts), which cleans up the
 * same things through `abortInFlight`. For the short spans in which a
 * command that has no handler of its own holds something to remove (the
 * conditional-write probe's key).
 */
export async function cleanUpOnSignal<T>(fn: () => Promise<T>, cleanup: () => Promise<unknown>, waitMs = 5000): Promise<T> {
  const handled = SIGNALS.filter((s) => process.listenerCount(s) === 0);
  let interrupted = false;
  const onSignal = (signal: NodeJS.Signals) => {
    interrupted = true;
    for (const s of handled) process.off(s, onSignal);
    let timer: NodeJS.Timeout | undefined;
    void Promise.race([cleanup().catch(() => undefined), new Promise((r) => (timer = setTimeout(r, waitMs)))]).then(() => {
      clearTimeout(timer);
      process.kill(process.pid, signal);
    });
  };
  for (const s of handled) process.on(s, onSignal);
  try {
    let result: T;
    try {
      result = await fn();
    } catch (err) {
      if (!interrupted) throw err;
    }
    // Interrupted: go no further (the cleanup may have changed what fn saw); the signal ends the process.
    if (interrupted) await new Promise<never>(() => undefined);
    return result!;
  } finally {
    for (const s of handled) process.off(s, onSignal);
  }
}
