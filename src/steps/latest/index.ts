import { applyWrites } from "../../apply/apply-write.js";
import { planLatestCleanup } from "../../catalog/latest-plan.js";
import { applyPlanned, contextTarget } from "../apply-planned.js";
import type { Step } from "../step.js";

/**
 * Copies this release to `releases/latest/` when the plan says it is the
 * highest stable version, and removes what it replaces. A concurrent
 * publisher may have copied another version meanwhile: the cleanup is
 * planned again (the same planner, on a fresh listing) after the copies;
 * records decide then, not the catalog preflight read, so a higher version
 * another publish is adding right now (record written, feeds not yet) stays.
 */
export const latestStep: Step = {
  name: "latest",
  skip: (ctx) => (ctx.plan?.latest?.update ? false : ctx.plan?.latest?.reason ?? "no plan"),
  async run(ctx) {
    await applyPlanned(ctx, "latest");
    await applyWrites(contextTarget(ctx), await planLatestCleanup(ctx.store, ctx.config.pluginId, ctx.inputs.version, undefined));
  },
};
