import { applyPlanned } from "../apply-planned.js";
import type { Step } from "../step.js";

/**
 * The public download copies (`downloads/<id>-<v>.dmg|.zip`), made after the
 * record and before any feed names them: a static host serves them as files
 * (server-side copy on S3).
 */
export const downloadsStep: Step = {
  name: "downloads",
  run: (ctx) => applyPlanned(ctx, "downloads"),
};
