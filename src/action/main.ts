import { registerPublish } from "../cli/commands/publish.js";
import { annotateError } from "../cli/github-actions.js";
import { createProgram, runProgram } from "../cli/program.js";
import { isRelcastError } from "../core/errors.js";
import { registerSecret } from "../core/secrets.js";
// The Action is one bundle: the S3 store registers itself by a static import
// (the CLI loads it on first use of an s3:// URL, which a bundler cannot follow).
import "../store/s3-store-factory.js";
import { publishArguments, requireSigningKey } from "./action-inputs.js";

/**
 * The GitHub Action's entry point (action.yml → action/dist/index.mjs): the
 * inputs become a `relcast publish` command line, run in this process. The
 * CLI does the Actions work itself: masks the key, groups the steps, writes
 * the outputs (version, appcast-url, download-url) and the step summary.
 */
export async function runAction(env: NodeJS.ProcessEnv = process.env): Promise<number> {
  // An input may carry the key instead of the environment; either is a secret.
  const keyInput = env["INPUT_SIGNING-KEY"]?.trim();
  registerSecret(keyInput);
  if (keyInput) env.RELCAST_SIGNING_KEY = keyInput;
  let args: string[];
  try {
    args = publishArguments(env);
    requireSigningKey(env, args);
  } catch (err) {
    if (!isRelcastError(err)) throw err;
    const message = `${err.message}${err.hint ? ` (fix: ${err.hint})` : ""}`;
    annotateError(message, { title: `relcast ${err.code}` });
    process.stderr.write(`relcast: error [${err.code}]: ${message}\n`);
    return err.exitCode;
  }
  return runProgram(createProgram([registerPublish]), [process.execPath, "relcast", ...args]);
}
