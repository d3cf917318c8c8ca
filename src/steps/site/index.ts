import { writesOf } from "../../domain/release-plan.js";
import { syncSite } from "../../site/site-sync.js";
import { contextTarget } from "../apply-planned.js";
import { need } from "../release-context.js";
import type { Step } from "../step.js";

/**
 * After the feeds: the planned public copies of catalog and appcast,
 * index.html, changelog.html, the stable latest downloads, and
 * `releases/latest/` in line with the catalog. When the feeds changed after
 * ours (a concurrent publish or yank), the site is planned again from them.
 */
export const siteStep: Step = {
  name: "site",
  async run(ctx) {
    const left = need(ctx.feedsLeft, "feeds written");
    await syncSite(contextTarget(ctx), ctx.config, {}, { writes: writesOf(need(ctx.plan, "plan"), "site"), ...left });
  },
};
