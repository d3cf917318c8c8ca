import { RelcastError } from "../../core/errors.js";
import { need, type ReleaseContext } from "../release-context.js";
import type { Step } from "../step.js";
import { signEd25519, verifyEd25519 } from "../../sparkle/ed25519-stream.js";

/** Ed25519 over the exact zip bytes; checked against the public key before anything is uploaded. */
export const signStep: Step = {
  name: "sign",
  async run(ctx: ReleaseContext) {
    const zip = need(ctx.zip, "zip");
    const signature = await signEd25519(ctx.key, { file: zip.file });
    if (!(await verifyEd25519(ctx.key.publicKey, signature, { file: zip.file }))) {
      throw new RelcastError("E_SIGNATURE", "the signature of the zip does not verify with the key's own public key", "the key file is damaged; re-export it with `generate_keys -x`");
    }
    ctx.edSignature = signature.toString("base64");
    ctx.logger.info(`signed ${zip.sizeBytes} bytes (edSignature ${ctx.edSignature.slice(0, 12)}…)`);
  },
};
