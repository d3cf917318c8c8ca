import { isDeepStrictEqual } from "node:util";
import type { RelcastConfig } from "../config/schema.js";
import { isHttpUrlTemplate } from "../config/schema.js";
import { RelcastError } from "../core/errors.js";
import type { ReleaseRecord } from "./record-schema.js";
import { releaseNotesPageUrl } from "./release-layout.js";

/** Per-release Sparkle flags of `relcast publish`, as typed on the command line. */
export interface AutoupdateFlags {
  /** `--critical` (true) or `--critical <build>`: critical only for installs below that build. */
  critical?: true | string | undefined;
  minimumAutoupdateVersion?: string | undefined;
  phasedRolloutInterval?: string | undefined;
  releaseNotesUrl?: string | undefined;
  fullReleaseNotesUrl?: string | undefined;
}

type Autoupdate = NonNullable<ReleaseRecord["autoupdate"]>;
export type AutoupdateOptions = Pick<Autoupdate, "criticalUpdate" | "minimumAutoupdateVersion" | "phasedRolloutInterval" | "releaseNotesLink" | "fullReleaseNotesLink">;

const OPTION_KEYS = ["criticalUpdate", "minimumAutoupdateVersion", "phasedRolloutInterval", "releaseNotesLink", "fullReleaseNotesLink"] as const;

function usage(message: string, hint: string): RelcastError {
  return new RelcastError("E_USAGE", message, hint);
}

/**
 * Sparkle compares these against the installed copy's CFBundleVersion, so
 * they are build numbers, not semver; one above this release's own build
 * would keep every installed copy from updating to it.
 */
function buildBound(flag: string, value: string, build: number): string {
  if (!/^\d{1,15}$/.test(value)) {
    throw usage(`${flag} "${value}" is not a build number`, `Sparkle compares it with the installed copy's CFBundleVersion: pass an integer build such as ${build}, not a semver`);
  }
  if (Number(value) > build) {
    throw usage(`${flag} ${value} is above this release's own build ${build}`, `pass a build number at or below ${build} (an installed copy at or above ${value} is already newer than this release)`);
  }
  return String(Number(value));
}

function link(flag: string, template: string | undefined, version: string): string | undefined {
  if (template === undefined) return undefined;
  if (!isHttpUrlTemplate(template)) {
    throw usage(`${flag} "${template}" is not an absolute http(s) URL`, "Sparkle ignores release-notes links that are not http or https; pass e.g. https://example.com/notes/{version}.html");
  }
  return template.replaceAll("{version}", version);
}

function interval(text: string | undefined, fallback: number | undefined): number | undefined {
  if (text === undefined) return fallback;
  if (!/^\d{1,10}$/.test(text)) throw usage(`--phased-rollout-interval "${text}" is not a whole number of seconds`, "pass seconds between rollout groups, e.g. 86400 (0 turns a configured default off)");
  const seconds = Number(text);
  return seconds === 0 ? undefined : seconds;
}

/** Flags win over the config's defaults; the result is stored in the record's `autoupdate`. */
export function resolveAutoupdateOptions(config: RelcastConfig, flags: AutoupdateFlags, version: string, build: number): AutoupdateOptions {
  const defaults = config.appcast ?? {};
  const options: AutoupdateOptions = {};
  if (flags.critical !== undefined) {
    options.criticalUpdate = flags.critical === true ? {} : { version: buildBound("--critical", flags.critical, build) };
  }
  if (flags.minimumAutoupdateVersion !== undefined) {
    options.minimumAutoupdateVersion = buildBound("--minimum-autoupdate-version", flags.minimumAutoupdateVersion, build);
  }
  const seconds = interval(flags.phasedRolloutInterval, defaults.phasedRolloutInterval);
  if (seconds !== undefined) options.phasedRolloutInterval = seconds;
  const notes = link("--release-notes-url", flags.releaseNotesUrl ?? defaults.releaseNotesUrl, version);
  if (notes !== undefined) options.releaseNotesLink = notes;
  // A page relcast renders from the notes and hosts itself; frozen into the record like any link.
  else if (defaults.releaseNotes === "page") options.releaseNotesLink = releaseNotesPageUrl(config.appUrl, version);
  const full = link("--full-release-notes-url", flags.fullReleaseNotesUrl ?? defaults.fullReleaseNotesUrl, version);
  if (full !== undefined) options.fullReleaseNotesLink = full;
  return options;
}

/** The names of options whose value differs from what the stored record of this version says. */
export function changedOptions(record: ReleaseRecord, options: AutoupdateOptions): string[] {
  const stored = record.autoupdate ?? {};
  return OPTION_KEYS.filter((k) => !isDeepStrictEqual((stored as Record<string, unknown>)[k], options[k]));
}
