/**
 * Upload progress on stderr: a redrawn bar on a terminal, otherwise (CI logs,
 * --json, pipes) one plain line per 25% so logs stay readable.
 */
export function uploadProgressReporter(options: { tty: boolean; quiet: boolean }): (loaded: number, total: number | undefined, key: string) => void {
  const lastStep = new Map<string, number>();
  return (loaded, total, key) => {
    if (options.quiet || !total || total < 8 * 1024 * 1024) return;
    const fraction = Math.min(1, loaded / total);
    const mib = (n: number) => (n / 1048576).toFixed(1);
    if (options.tty) {
      const width = 30;
      const filled = Math.round(fraction * width);
      process.stderr.write(`\r  ${key} [${"#".repeat(filled)}${"-".repeat(width - filled)}] ${(fraction * 100).toFixed(0).padStart(3)}% ${mib(loaded)}/${mib(total)} MiB${fraction === 1 ? "\n" : ""}`);
      return;
    }
    const step = Math.floor(fraction * 4);
    if (step > (lastStep.get(key) ?? 0) || (step === 0 && !lastStep.has(key))) {
      lastStep.set(key, step);
      process.stderr.write(`  ${key}: ${(fraction * 100).toFixed(0)}% (${mib(loaded)} of ${mib(total)} MiB)\n`);
    }
  };
}
