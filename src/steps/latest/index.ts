import semver from "semver";
import { need } from "../release-context.js";
import type { Step } from "../step.js";
import { latestObjects, yankedAmong } from "../../catalog/latest-objects.js";

/**
 * Copies this release to `releases/latest/` when it is the highest stable
 * version, then removes every older or yanked version found there. Each
 * publisher lists after its own copy, so concurrent publishers converge on
 * the highest version without a shared pointer.
 */
export const latestStep: Step = {
  name: "latest",
  skip: (ctx) => (ctx.plan?.latest.update ? false : ctx.plan?.latest.reason ?? "no plan"),
  async run(ctx) {
    const plan = need(ctx.plan, "plan");
    for (const write of plan.writes.filter((w) => w.action === "copy" && w.copyFrom)) {
      await ctx.store.copy(write.copyFrom!, write.key, { contentType: write.contentType, cacheControl: write.cacheControl });
      ctx.written.push(write.key);
      ctx.logger.info(`latest: ${write.key}`);
    }
    const present = await latestObjects(ctx.store, ctx.config.pluginId);
    const yanked = await yankedAmong(ctx.store, [...new Set(present.map((p) => p.version))]);
    const highest = semver.rsort(present.map((p) => p.version).filter((v) => !yanked.has(v)))[0];
    for (const obj of present) {
      if (yanked.has(obj.version) || (highest && semver.lt(obj.version, highest))) {
        await ctx.store.delete(obj.key);
        ctx.logger.info(`latest: removed ${obj.key} (${yanked.has(obj.version) ? "yanked" : `older than ${highest}`})`);
      }
    }
  },
};
