import { applyPlanned } from "../apply-planned.js";
import type { Step } from "../step.js";

/** The versioned disk image, zip and delta updates, immutable, created once (the plan says which are already there). */
export const uploadStep: Step = {
  name: "upload",
  run: (ctx) => applyPlanned(ctx, "upload"),
};

/** The immutable record, written after the artifacts it names exist. */
export const recordStep: Step = {
  name: "record",
  run: (ctx) => applyPlanned(ctx, "record"),
};
