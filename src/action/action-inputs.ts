import { RelcastError } from "../core/errors.js";
import { splitArgs } from "./split-args.js";

/**
 * The Action's inputs (action.yml), read the way the runner passes them:
 * `INPUT_<NAME>` with the name upper-cased and spaces (not hyphens) turned
 * into underscores, so `dry-run` arrives as `INPUT_DRY-RUN`.
 */
function input(env: NodeJS.ProcessEnv, name: string): string | undefined {
  const value = env[`INPUT_${name.replace(/ /g, "_").toUpperCase()}`]?.trim();
  return value === undefined || value === "" ? undefined : value;
}

/** YAML 1.2 core schema booleans, as @actions/core's getBooleanInput accepts them. */
function booleanInput(env: NodeJS.ProcessEnv, name: string): boolean {
  const value = input(env, name);
  if (value === undefined) return false;
  if (["true", "True", "TRUE"].includes(value)) return true;
  if (["false", "False", "FALSE"].includes(value)) return false;
  throw new RelcastError("E_USAGE", `input ${name} is "${value}", not true or false`, `set ${name}: true or ${name}: false`);
}

function required(env: NodeJS.ProcessEnv, name: string, hint: string): string {
  const value = input(env, name);
  if (value === undefined) throw new RelcastError("E_USAGE", `input ${name} is required`, hint);
  return value;
}

/**
 * The `relcast publish` arguments the inputs stand for. The version defaults
 * to the pushed tag (`GITHUB_REF_NAME` on a tag push); `args` come last, so
 * they can add any flag the inputs do not name.
 */
export function publishArguments(env: NodeJS.ProcessEnv): string[] {
  const tag = env.GITHUB_REF_TYPE === "tag" ? env.GITHUB_REF_NAME : undefined;
  const version = input(env, "version") ?? tag;
  if (version === undefined) {
    throw new RelcastError("E_USAGE", "input version is required when the workflow was not started by a tag push", "set version: to the release version or tag, e.g. version: ${{ github.ref_name }}");
  }
  const args = ["publish", "--version", version];
  args.push("--app", required(env, "app", "set app: to the built plugin bundle, e.g. build/Release/MyPlugin.bundle"));
  args.push("--dmg", required(env, "dmg", "set dmg: to the disk image to publish"));
  const optional: Array<[string, string]> = [["notes", "--notes"], ["changelog", "--changelog"], ["store", "--store"], ["channel", "--channel"], ["config", "--config"]];
  for (const [name, flag] of optional) {
    const value = input(env, name);
    if (value !== undefined) args.push(flag, value);
  }
  if (booleanInput(env, "dry-run")) args.push("--dry-run");
  const extra = input(env, "args");
  if (extra !== undefined) args.push(...splitArgs(extra));
  return args;
}

/**
 * The Action signs with the `signing-key` input (or RELCAST_SIGNING_KEY in
 * the step's env, or `--key-file` in `args`). When none is there, the error
 * names the input and the secret: a secret that does not exist in the
 * repository reaches the Action as an empty input, silently.
 */
export function requireSigningKey(env: NodeJS.ProcessEnv, args: readonly string[]): void {
  if (input(env, "signing-key") !== undefined || env.RELCAST_SIGNING_KEY?.trim() || args.some((a) => a === "--key-file" || a.startsWith("--key-file="))) return;
  throw new RelcastError(
    "E_KEY",
    "no signing key: the signing-key input is empty (a secret that does not exist in this repository, or is not passed to forks' pull requests, arrives empty)",
    "create the repository secret RELCAST_SIGNING_KEY (Settings → Secrets and variables → Actions) holding the base64 key from `relcast keys generate` or Sparkle's `generate_keys -x`, and pass it to the step: signing-key: ${{ secrets.RELCAST_SIGNING_KEY }}",
  );
}
