import { applyTarget, applyWrites, type ApplyTarget } from "../apply/apply-write.js";
import { writesOf, type ApplyStepName } from "../domain/release-plan.js";
import { need, type ReleaseContext } from "./release-context.js";

/** Where the apply steps write: the context's store, its log, and the ETags and keys written so far. */
export function contextTarget(ctx: ReleaseContext): ApplyTarget {
  return { ...applyTarget(ctx.store, (line) => ctx.logger.info(line)), etags: ctx.etags, written: ctx.written };
}

/** Carries out the writes the plan gives this step, in order. */
export async function applyPlanned(ctx: ReleaseContext, step: ApplyStepName): Promise<void> {
  await applyWrites(contextTarget(ctx), writesOf(need(ctx.plan, "plan"), step));
}
