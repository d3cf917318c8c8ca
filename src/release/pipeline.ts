import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { deltasStep } from "../steps/deltas/index.js";
import { downloadsStep } from "../steps/downloads/index.js";
import { feedsStep } from "../steps/feeds/index.js";
import { latestStep } from "../steps/latest/index.js";
import { planStep } from "../steps/plan/index.js";
import { preflightStep } from "../steps/preflight/index.js";
import { signStep } from "../steps/sign/index.js";
import { siteStep } from "../steps/site/index.js";
import { recordStep, uploadStep } from "../steps/upload/index.js";
import { zipStep } from "../steps/zip/index.js";
import type { ReleaseContext } from "../steps/release-context.js";
import type { Step } from "../steps/step.js";
import { withInterruptCleanup } from "./interrupt.js";

/** A release, in order. Everything before `upload` only reads. */
export const PLAN_STEPS: readonly Step[] = [preflightStep, zipStep, signStep, deltasStep, planStep];
export const APPLY_STEPS: readonly Step[] = [uploadStep, recordStep, downloadsStep, latestStep, feedsStep, siteStep];

/**
 * Test hook for crash-safety tests: RELCAST_FAILPOINT=before:<step> or
 * after:<step> kills the process with SIGKILL at that boundary, exactly as
 * a runner being cancelled would.
 */
function failpoint(where: "before" | "after", step: string): void {
  // RELCAST_FAILPOINT_SIGNAL=SIGTERM|SIGINT sends that instead: the interrupt tests' Ctrl-C at a known step.
  if (process.env.RELCAST_FAILPOINT === `${where}:${step}`) process.kill(process.pid, (process.env.RELCAST_FAILPOINT_SIGNAL as NodeJS.Signals | undefined) ?? "SIGKILL");
}

let currentStep = "start";

export async function runSteps(ctx: ReleaseContext, steps: readonly Step[]): Promise<void> {
  for (const step of steps) {
    currentStep = step.name;
    failpoint("before", step.name);
    const reason = step.skip?.(ctx);
    if (reason) {
      ctx.logger.debug(`${step.name}: skipped (${reason})`);
      continue;
    }
    const started = performance.now();
    await ctx.logger.group(step.name, () => step.run(ctx));
    ctx.logger.debug(`${step.name}: ${Math.round(performance.now() - started)} ms`);
    await ctx.afterStep?.(step.name, ctx);
    failpoint("after", step.name);
  }
}

/** Runs the plan steps and, unless dry-run, the apply steps; the work folder is always removed. */
export async function runRelease(ctx: Omit<ReleaseContext, "workDir" | "written" | "etags" | "stopping">, inspect?: (ctx: ReleaseContext) => Promise<void>): Promise<ReleaseContext> {
  const workDir = await mkdtemp(path.join(os.tmpdir(), "relcast-"));
  const stop = new AbortController();
  const full: ReleaseContext = { ...ctx, workDir, written: [], etags: new Map(), stopping: stop.signal };
  try {
    return await withInterruptCleanup(full, () => currentStep, async () => {
      try {
        await runSteps(full, PLAN_STEPS);
        // A dry run is the same code stopped here; `inspect` sees the plan while its files still exist.
        await inspect?.(full);
        if (!full.inputs.dryRun) await runSteps(full, APPLY_STEPS);
        return full;
      } catch (err) {
        // A step before the plan failed while the disk image was still being copied into the work folder.
        stop.abort();
        await full.dmgSnapshot?.catch(() => undefined);
        throw err;
      }
    });
  } finally {
    await rm(workDir, { recursive: true, force: true });
  }
}
