import { PreconditionFailedError, RelcastError } from "../../core/errors.js";
import { need, type ReleaseContext } from "../release-context.js";
import type { PlannedWrite } from "../../domain/release-plan.js";
import { recordKey, RELEASES_PREFIX, LATEST_PREFIX } from "../../domain/release-layout.js";
import type { Step } from "../step.js";
import { storedDigest } from "../../store/stored-digest.js";

/**
 * Writes one planned create-once object. Losing the If-None-Match race is
 * fine when the winner wrote the same bytes (a concurrent identical run).
 */
export async function applyCreate(ctx: ReleaseContext, write: PlannedWrite, expectedSha256?: string): Promise<void> {
  if (write.action !== "create" || !write.source) return;
  const body = "file" in write.source ? { file: write.source.file } : write.source.text;
  for (let attempt = 1; ; attempt++) {
    try {
      await ctx.store.put(write.key, body, { contentType: write.contentType, cacheControl: write.cacheControl, ifNoneMatch: "*" });
      ctx.written.push(write.key);
      ctx.logger.info(`uploaded ${write.key}${write.sizeBytes !== undefined ? ` (${write.sizeBytes} bytes)` : ""}`);
      return;
    } catch (err) {
      if (!(err instanceof PreconditionFailedError)) throw err;
      const stored = expectedSha256 ? await storedDigest(ctx.store, write.key) : undefined;
      if (expectedSha256 && stored?.sha256 === expectedSha256) {
        ctx.logger.info(`${write.key} was written meanwhile with the same bytes; keeping it`);
        return;
      }
      // S3 answers 409 while a concurrent upload of the same key is still completing:
      // the object is not there yet, so wait and try again.
      if (expectedSha256 && stored === undefined && attempt < 10) {
        await new Promise((r) => setTimeout(r, 100 * attempt + Math.random() * 100));
        continue;
      }
      throw new RelcastError("E_CONFLICT", `${write.key} was created by another publish while this one ran`, "another pipeline published this version; check the catalog and bump the version if needed");
    }
  }
}

function isVersionedArtifact(key: string): boolean {
  return key.startsWith(RELEASES_PREFIX) && !key.startsWith(LATEST_PREFIX) && !key.endsWith("/release.json") && (key.endsWith(".dmg") || key.endsWith(".zip") || key.endsWith(".delta"));
}

/** The versioned disk image, zip and delta updates, immutable, created once. */
export const uploadStep: Step = {
  name: "upload",
  async run(ctx) {
    const plan = need(ctx.plan, "plan");
    for (const write of plan.writes.filter((w) => isVersionedArtifact(w.key))) {
      const sha = write.key.endsWith(".dmg") ? ctx.dmg?.sha256 : write.key.endsWith(".delta") ? ctx.deltas?.find((d) => write.key.endsWith(`/${d.fileName}`))?.sha256 : ctx.zip?.sha256;
      await applyCreate(ctx, write, sha);
    }
  },
};

/** The immutable record, written after the artifacts it names exist. */
export const recordStep: Step = {
  name: "record",
  async run(ctx) {
    const plan = need(ctx.plan, "plan");
    const write = plan.writes.find((w) => w.key === recordKey(plan.version));
    if (!write) throw new Error("pipeline bug: no record write planned");
    const expected = write.source && "text" in write.source ? write.source.text : undefined;
    try {
      await applyCreate(ctx, write);
    } catch (err) {
      // Two identical runs racing: the other one's record is byte-identical only if
      // it was planned from the same inputs and time, so compare the artifacts it names.
      const stored = await ctx.store.get(write.key);
      if (stored && expected && stored.body.toString("utf8") === expected) return;
      throw err;
    }
  },
};
