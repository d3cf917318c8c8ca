import type { Step } from "../step.js";
import { syncPublicSite } from "../../site/public-site.js";

/**
 * After the feeds: the public copies of catalog and appcast, index.html,
 * changelog.html, the stable latest downloads, and `releases/latest/`
 * brought in line with the catalog (a concurrent yank may have moved it).
 */
export const siteStep: Step = {
  name: "site",
  async run(ctx) {
    const done = await syncPublicSite(ctx.store, ctx.store, ctx.config);
    for (const line of done) ctx.logger.info(`site: ${line}`);
  },
};
