import { rmSync } from "node:fs";
import { APPCAST_KEY, CATALOG_KEY, INDEX_KEY, publicAppcastKey, publicCatalogKey } from "../domain/release-layout.js";
import type { ReleaseContext } from "../steps/release-context.js";

const EXIT_FOR: Record<string, number> = { SIGINT: 130, SIGTERM: 143 };

/** What an interrupted publish had made public, in one sentence. */
function publicState(ctx: ReleaseContext): string {
  const feeds = new Set([CATALOG_KEY, APPCAST_KEY, publicCatalogKey(ctx.config.pluginId), publicAppcastKey(ctx.config.pluginId), INDEX_KEY]);
  const version = ctx.inputs.version;
  if (ctx.written.some((k) => feeds.has(k))) {
    return `${version} may already be public: the feeds were being updated (${ctx.written.filter((k) => feeds.has(k)).join(", ")} written); re-run the same command to finish the site`;
  }
  if (ctx.written.length > 0) {
    return `nothing became public: ${ctx.written.length} object(s) of ${version} were uploaded, but catalog and appcast still describe the previous releases; re-run the same command to finish (no feed names them until then)`;
  }
  return "nothing became public and nothing was written to the store";
}

/**
 * While `fn` runs, Ctrl-C and SIGTERM stop the publish cleanly: say in which
 * step it stopped and what became public, remove the temp folder and this
 * process's temp objects, abort its multipart uploads, then exit 130/143.
 * A second signal during the cleanup exits at once.
 */
export async function withInterruptCleanup<T>(ctx: ReleaseContext, currentStep: () => string, fn: () => Promise<T>): Promise<T> {
  let stopping = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (stopping) process.exit(EXIT_FOR[signal] ?? 1);
    stopping = true;
    const write = (line: string) => process.stderr.write(`relcast: ${line}\n`);
    const step = currentStep();
    // The folder store's abort is synchronous, so the run writes nothing more before the exit; S3 aborts need the
    // network, and a write already sent (a Complete) may still land: what became public is said once they settled.
    void (ctx.store.abortInFlight?.() ?? Promise.resolve([])).catch(() => [] as string[]).then((done) => {
      write(`interrupted by ${signal} in step ${step}; ${publicState(ctx)}`);
      // A copy or a worker of the stopped step may still create a file in the folder while it is removed (ENOTEMPTY
      // under load): removal is retried, and a folder that still stays is named, not reported as removed.
      let left: string | undefined;
      try {
        rmSync(ctx.workDir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
      } catch (err) {
        left = (err as NodeJS.ErrnoException).code ?? String(err);
      }
      for (const line of done) write(line);
      if (left) write(`could not remove the temp folder ${ctx.workDir} (${left}): delete it by hand; relcast gc removes what a killed run leaves in the store`);
      else write(`removed the temp folder ${ctx.workDir}${done.length ? `, ${done.length} temp object(s)/upload(s)` : ""}; relcast gc removes anything a killed run leaves`);
      process.exit(EXIT_FOR[signal] ?? 1);
    });
  };
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);
  try {
    return await fn();
  } finally {
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
  }
}
