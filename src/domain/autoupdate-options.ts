import { isDeepStrictEqual } from "node:util";
import type { RelcastConfig } from "../config/schema.js";
import { buildBound, urlTemplate as link, usageError as usage } from "./flag-values.js";
import type { ReleaseRecord } from "./record-schema.js";
import { localizedNotesLinks, resolveItemElements, type ItemElementFlags } from "./item-elements.js";
import { releaseNotesPageUrl } from "./release-layout.js";

/** Per-release Sparkle flags of `relcast publish`, as typed on the command line (the item elements' flags: item-elements.ts). */
export interface AutoupdateFlags extends ItemElementFlags {
  /** `--critical` (true) or `--critical <build>`: critical only for installs below that build. */
  critical?: true | string | undefined;
  minimumAutoupdateVersion?: string | undefined;
  phasedRolloutInterval?: string | undefined;
  releaseNotesUrl?: string | undefined;
  fullReleaseNotesUrl?: string | undefined;
  /** Languages of `--localized-notes` (their links are hosted pages in page mode). */
  localizedNotesLanguages?: readonly string[] | undefined;
}

type Autoupdate = NonNullable<ReleaseRecord["autoupdate"]>;
const OPTION_KEYS = [
  "criticalUpdate", "minimumAutoupdateVersion", "phasedRolloutInterval", "releaseNotesLink", "fullReleaseNotesLink",
  "minimumUpdateVersion", "informationalUpdate", "link", "ignoreSkippedUpgradesBelowVersion", "maximumSystemVersion", "localizedReleaseNotesLinks",
] as const;

export type AutoupdateOptions = Pick<Autoupdate, (typeof OPTION_KEYS)[number]>;

function interval(text: string | undefined, fallback: number | undefined): number | undefined {
  if (text === undefined) return fallback;
  if (!/^\d{1,10}$/.test(text)) throw usage(`--phased-rollout-interval "${text}" is not a whole number of seconds`, "pass seconds between rollout groups, e.g. 86400 (0 turns a configured default off)");
  const seconds = Number(text);
  return seconds === 0 ? undefined : seconds;
}

/** Flags win over the config's defaults; the result is stored in the record's `autoupdate`. */
export function resolveAutoupdateOptions(config: RelcastConfig, flags: AutoupdateFlags, version: string, build: number, bundleMinimumSystem?: string): AutoupdateOptions {
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
  Object.assign(options, resolveItemElements(config, flags, version, build, bundleMinimumSystem));
  const languages = flags.localizedNotesLanguages ?? [];
  if (languages.length > 0) {
    const links = localizedNotesLinks(config, options.releaseNotesLink, version, languages);
    if (links.length > 0) options.localizedReleaseNotesLinks = links;
  }
  return options;
}

/** The names of options whose value differs from what the stored record of this version says. */
export function changedOptions(record: ReleaseRecord, options: AutoupdateOptions): string[] {
  const stored = record.autoupdate ?? {};
  return OPTION_KEYS.filter((k) => !isDeepStrictEqual((stored as Record<string, unknown>)[k], options[k]));
}
