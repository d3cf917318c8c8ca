import { redactUrl } from "../core/redact-url.js";
import { httpUrlTemplateProblem } from "../config/schema.js";
import { RelcastError } from "../core/errors.js";

export function usageError(message: string, hint: string): RelcastError {
  return new RelcastError("E_USAGE", message, hint);
}

/**
 * A build-number argument of `publish` (--critical, --minimum-autoupdate-version,
 * --minimum-update-version, --informational-update-versions, ...). Sparkle
 * compares it with the installed copy's CFBundleVersion, so it is a build
 * number, not a semver; one above this release's own build would name
 * installs that are already newer than this release.
 */
export function buildBound(flag: string, value: string, build: number): string {
  if (!/^\d{1,15}$/.test(value)) {
    throw usageError(`${flag} "${value}" is not a build number`, `Sparkle compares it with the installed copy's CFBundleVersion: pass an integer build such as ${build}, not a semver`);
  }
  if (Number(value) > build) {
    throw usageError(`${flag} ${value} is above this release's own build ${build}`, `pass a build number at or below ${build} (an installed copy at or above ${value} is already newer than this release)`);
  }
  return String(Number(value));
}

/** A URL flag or config template: absolute http(s) (Sparkle drops other links); `{version}` is filled in. */
export function urlTemplate(flag: string, template: string | undefined, version: string, example = "https://example.com/notes/{version}.html"): string | undefined {
  if (template === undefined) return undefined;
  const problem = httpUrlTemplateProblem(template);
  if (problem) {
    throw usageError(`${flag} ${JSON.stringify(redactUrl(template))} ${problem}`, `Sparkle ignores links it cannot parse (and any not http or https); pass e.g. ${example}`);
  }
  return template.replaceAll("{version}", version);
}
