import { need } from "../release-context.js";
import type { Step } from "../step.js";
import { ensureDownloads } from "../../site/public-site.js";
import { CACHE_IMMUTABLE } from "../../store/content-types.js";

/**
 * The public download copies (`downloads/<id>-<v>.dmg|.zip`), made after the
 * record and before any feed names them: a static host serves them as files
 * (server-side copy on S3).
 */
export const downloadsStep: Step = {
  name: "downloads",
  async run(ctx) {
    const record = need(ctx.record, "record");
    const done = await ensureDownloads(ctx.store, ctx.store, record, ctx.config.cacheControl?.immutable ?? CACHE_IMMUTABLE);
    for (const line of done) ctx.logger.info(line);
  },
};
