import { applyTarget, applyWrites, type ApplyTarget } from "../apply/apply-write.js";
import { writesOf, type ApplyStepName, type ReleasePlan } from "../domain/release-plan.js";
import { need, type ReleaseContext } from "./release-context.js";

/**
 * The size of every write-once object the plan puts: a later step's copy of
 * one it wrote then needs no HEAD, since no one can have replaced it. An
 * object that may be rewritten (the catalog, by a concurrent publish) is not
 * here: its copy HEADs it and copies what is there now; pinned to this run's
 * own version, the site step's copy of the catalog failed once another
 * publish had moved it on, round after round.
 */
function plannedSizes(plan: ReleasePlan | undefined): Map<string, number> {
  const sizes = new Map<string, number>();
  for (const w of plan?.writes ?? []) if (w.op === "put" && w.precondition.kind === "create-only" && w.sizeBytes !== undefined) sizes.set(w.key, w.sizeBytes);
  return sizes;
}

/** Where the apply steps write: the context's store, its log, and the ETags and keys written so far. */
export function contextTarget(ctx: ReleaseContext): ApplyTarget {
  return { ...applyTarget(ctx.store, (line) => ctx.logger.info(line)), etags: ctx.etags, written: ctx.written, sizes: plannedSizes(ctx.plan) };
}

/** Carries out the writes the plan gives this step, in order. */
export async function applyPlanned(ctx: ReleaseContext, step: ApplyStepName): Promise<void> {
  await applyWrites(contextTarget(ctx), writesOf(need(ctx.plan, "plan"), step));
}
