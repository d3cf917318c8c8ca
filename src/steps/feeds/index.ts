import { APPCAST_KEY, CATALOG_KEY } from "../../domain/release-layout.js";
import { applyFeeds } from "../../site/feeds-apply.js";
import { contextTarget } from "../apply-planned.js";
import { need } from "../release-context.js";
import type { Step } from "../step.js";
import { assertCatalogHolds } from "./catalog-readback.js";

/**
 * Catalog, then appcast (then the catalog index), each conditional on the
 * ETag it was planned at: last, so a feed never names an object that is not
 * there. A lost race plans the feeds and the site again, by the same code.
 * Then the catalog is read back: it must hold this release.
 */
export const feedsStep: Step = {
  name: "feeds",
  async run(ctx) {
    const record = need(ctx.record, "record");
    const { plan, site } = await applyFeeds(contextTarget(ctx), ctx.config, { kind: "add", record }, ctx.workDir, need(ctx.plan, "plan"), ctx.feedSigning);
    ctx.plan = plan;
    ctx.feedsLeft = { catalogEtag: site.catalogEtag, appcastEtag: site.appcastEtag };
    await assertCatalogHolds(ctx.store, record, ctx.etags.get(CATALOG_KEY));
    ctx.logger.info(`catalog and appcast updated (${ctx.store.uriFor(APPCAST_KEY)})`);
  },
};
