import path from "node:path";
import { need, type ReleaseContext } from "../release-context.js";
import { zipFileName } from "../../domain/release-layout.js";
import type { Step } from "../step.js";
import { startSignature } from "../../sparkle/ed25519-stream.js";
import { zipBundle } from "./reproducible-zip.js";
import { assertZipFollowsRules } from "./zip-check.js";

/** Zips the bundle into the work folder (never into the store directly) and checks the zip it wrote. */
export const zipStep: Step = {
  name: "zip",
  async run(ctx: ReleaseContext) {
    const out = path.join(ctx.workDir, zipFileName(ctx.config.pluginId, ctx.inputs.version));
    // The signature's first SHA-512 pass and the SHA-256 see the bytes as they are written.
    const signature = startSignature(ctx.key);
    const result = await zipBundle(ctx.inputs.appDir, out, { observers: [signature] });
    await assertZipFollowsRules(result.file, ctx.inputs.appDir, result.symlinks);
    for (const skipped of result.skipped) ctx.logger.warn(`left out of the zip: ${skipped} (Finder/AppleDouble junk or special file)`);
    ctx.zip = { file: result.file, sizeBytes: result.sizeBytes, sha256: result.sha256, contentHashes: result.contentHashes };
    ctx.zipSignature = signature;
    ctx.logger.info(`zipped ${result.entryCount} entries, ${result.sizeBytes} bytes, sha256 ${result.sha256}`);
    need(ctx.zip, "zip");
  },
};
