import { RelcastError } from "../../core/errors.js";
import { need, type ReleaseContext } from "../release-context.js";
import type { Step } from "../step.js";
import { signAndCheck } from "../../sparkle/ed25519-stream.js";
import { startZipUpload } from "../upload/early-upload.js";

/**
 * Ed25519 over the exact zip bytes; checked against the public key before
 * anything is uploaded. The zip step fed the first of the two passes while it
 * wrote the zip, so this reads the zip once: the second pass, whose hash the
 * check against the public key reuses.
 */
export const signStep: Step = {
  name: "sign",
  async run(ctx: ReleaseContext) {
    const zip = need(ctx.zip, "zip");
    const { signature, verified } = await signAndCheck(ctx.key, { file: zip.file }, ctx.zipSignature);
    ctx.zipSignature = undefined;
    if (!verified) {
      throw new RelcastError("E_SIGNATURE", "the signature of the zip does not verify with the key's own public key", "the key file is damaged; re-export it with `generate_keys -x`");
    }
    ctx.edSignature = signature.toString("base64");
    // On S3 the zip's parts go out while the deltas and the plan are made; the upload step completes the object.
    startZipUpload(ctx, zip.file);
    ctx.logger.info(`signed ${zip.sizeBytes} bytes (edSignature ${ctx.edSignature.slice(0, 12)}…)`);
  },
};
