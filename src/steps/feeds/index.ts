import { regenerateAppcast, updateCatalog } from "../../catalog/feed-files.js";
import { need } from "../release-context.js";
import type { Step } from "../step.js";

/** Catalog, then appcast: last, so a feed never names an object that is not there. */
export const feedsStep: Step = {
  name: "feeds",
  async run(ctx) {
    const record = need(ctx.record, "record");
    await updateCatalog(ctx.store, ctx.config, record);
    await regenerateAppcast(ctx.store, ctx.config);
    ctx.logger.info(`catalog and appcast updated (${ctx.store.uriFor("releases/appcast.xml")})`);
  },
};
