import type { ReleaseContext } from "./release-context.js";

/** One stage of a release (goreleaser's pipe): a name, an optional skip reason, and run. */
export interface Step {
  readonly name: string;
  /** A reason to skip, or false to run. */
  skip?(ctx: ReleaseContext): string | false;
  run(ctx: ReleaseContext): Promise<void>;
}
