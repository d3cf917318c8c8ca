import type { RelcastConfig } from "../config/schema.js";
import { compareSparkleVersions } from "../sparkle/version-comparator.js";
import { buildBound, urlTemplate, usageError } from "./flag-values.js";
import type { ReleaseRecord } from "./record-schema.js";
import { localizedNotesPageUrl } from "./release-layout.js";

type Autoupdate = NonNullable<ReleaseRecord["autoupdate"]>;
export type ItemElements = Pick<Autoupdate, "minimumUpdateVersion" | "informationalUpdate" | "link" | "ignoreSkippedUpgradesBelowVersion" | "maximumSystemVersion">;

export interface ItemElementFlags {
  minimumUpdateVersion?: string | undefined;
  informationalUpdateVersions?: string | undefined;
  informational?: boolean | undefined;
  link?: string | undefined;
  ignoreSkippedUpgradesBelowVersion?: string | undefined;
  maximumSystemVersion?: string | undefined;
  /** Read only to check --ignore-skipped-upgrades-below-version (resolved with the other options). */
  minimumAutoupdateVersion?: string | undefined;
}

const FLAG = "--informational-update-versions";

/**
 * generate_appcast's list: comma-separated builds; `<build` means every
 * install below that build. Sparkle reads the entries as a set, so the
 * record keeps them in one order whatever order they were typed in (exact
 * builds, then bounds, each ascending): a re-run that only reorders them is
 * the same release.
 */
function informationalList(text: string, build: number): string[] {
  if (text.trim() === "") {
    // generate_appcast reads "" as "everyone": an unset CI variable would then make a release nobody can install.
    throw usageError(`${FLAG} is empty`, "list builds such as 100,<90; for an update that is informational for every install, pass --informational");
  }
  const exact = new Set<number>();
  const below = new Set<number>();
  for (const raw of text.split(",")) {
    const entry = raw.trim();
    if (entry === "") throw usageError(`${FLAG} "${text}" has an empty entry`, "separate builds with single commas, e.g. 100,105,<90");
    const isBelow = entry.startsWith("<");
    const value = Number(buildBound(FLAG, isBelow ? entry.slice(1).trim() : entry, build));
    const into = isBelow ? below : exact;
    if (into.has(value)) throw usageError(`${FLAG} names ${entry} twice`, "list each build once");
    into.add(value);
  }
  const sorted = (s: Set<number>) => [...s].sort((a, b) => a - b);
  return [...sorted(exact).map(String), ...sorted(below).map((n) => `<${n}`)];
}

/**
 * Sparkle offers an item with `sparkle:minimumUpdateVersion` only to an
 * install whose build is at or above it, and an install at or above the
 * item's own build already has the update: a bound equal to the build
 * leaves nobody to offer it to.
 */
function minimumUpdate(text: string, build: number): string {
  const value = buildBound("--minimum-update-version", text, build);
  if (Number(value) === build) {
    throw usageError(
      `--minimum-update-version ${value} is this release's own build: Sparkle offers the update only to installs at or above build ${value}, and those already have it, so no install would get it`,
      `pass a build below ${build} (the oldest build that may update straight to this one), or leave the flag out`,
    );
  }
  return value;
}

const MACOS_VERSION = /^\d{1,4}(\.\d{1,4}){0,2}$/;

function maximumSystem(text: string, bundleMinimum: string | undefined): string {
  if (!MACOS_VERSION.test(text)) {
    throw usageError(`--maximum-system-version "${text}" is not a macOS version`, "write it as numbers and dots, e.g. 15.9 (Sparkle does not offer the update on a newer macOS)");
  }
  if (bundleMinimum !== undefined && compareSparkleVersions(text, bundleMinimum) < 0) {
    throw usageError(
      `--maximum-system-version ${text} is below the bundle's LSMinimumSystemVersion ${bundleMinimum}: no Mac could install this update`,
      `pass a macOS version at or above ${bundleMinimum}, or leave the flag out`,
    );
  }
  return text;
}

/**
 * The item elements generate_appcast writes from its flags (and one it
 * keeps from existing items, `sparkle:maximumSystemVersion`). An
 * informational update shows only a "Learn More…" button that opens the
 * item's `<link>`; Sparkle ignores `sparkle:informationalUpdate` on an item
 * without one, so such a release needs a link.
 */
export function resolveItemElements(config: RelcastConfig, flags: ItemElementFlags, version: string, build: number, bundleMinimumSystem?: string): ItemElements {
  const out: ItemElements = {};
  if (flags.minimumUpdateVersion !== undefined) out.minimumUpdateVersion = minimumUpdate(flags.minimumUpdateVersion, build);
  if (flags.ignoreSkippedUpgradesBelowVersion !== undefined) {
    out.ignoreSkippedUpgradesBelowVersion = buildBound("--ignore-skipped-upgrades-below-version", flags.ignoreSkippedUpgradesBelowVersion, build);
    if (flags.minimumAutoupdateVersion === undefined) {
      // SUAppcastDriver reads it only for a major upgrade (the item has minimumAutoupdateVersion the install fails); on any other item it does nothing.
      throw usageError(
        "--ignore-skipped-upgrades-below-version needs --minimum-autoupdate-version: Sparkle reads it only on a major upgrade (an item with sparkle:minimumAutoupdateVersion), so without one it would change nothing",
        "pass --minimum-autoupdate-version <build> too (installs below it get this release as a major upgrade), or leave the flag out",
      );
    }
  }
  if (flags.informational && flags.informationalUpdateVersions !== undefined) {
    throw usageError("--informational and --informational-update-versions were both given", "pass --informational (every install) or --informational-update-versions <builds> (only those), not both");
  }
  if (flags.informational) out.informationalUpdate = [];
  else if (flags.informationalUpdateVersions !== undefined) out.informationalUpdate = informationalList(flags.informationalUpdateVersions, build);
  const link = urlTemplate("--link", flags.link ?? config.appcast?.link, version, "https://example.com/releases/{version}");
  if (link !== undefined) out.link = link;
  if (out.informationalUpdate !== undefined && out.link === undefined) {
    throw usageError(
      `version ${version} is an informational update but has no link: Sparkle ignores sparkle:informationalUpdate on an item without <link>, so every install would be offered it as a normal update`,
      "pass --link <url> (the page the \"Learn More…\" button opens), or set appcast.link in the config (e.g. \"https://example.com/releases/{version}\")",
    );
  }
  if (flags.maximumSystemVersion !== undefined) out.maximumSystemVersion = maximumSystem(flags.maximumSystemVersion, bundleMinimumSystem);
  return out;
}

/**
 * The `xml:lang` release-notes links of the localized notes: in page mode,
 * the pages relcast renders and hosts; inline notes need no link. Notes
 * behind a link relcast does not host (`releaseNotesUrl`) cannot be
 * localized by relcast: it would have to invent a URL for each language.
 */
export function localizedNotesLinks(config: RelcastConfig, defaultLink: string | undefined, version: string, languages: readonly string[]): Array<{ lang: string; url: string }> {
  if (config.appcast?.releaseNotes === "page") return languages.map((lang) => ({ lang, url: localizedNotesPageUrl(config.appUrl, version, lang) }));
  if (defaultLink !== undefined) {
    throw usageError(
      `--localized-notes cannot be used with the release-notes link ${defaultLink}: relcast does not host that page, so it has no page to link for each language`,
      "leave out --release-notes-url / appcast.releaseNotesUrl (the notes go inline, one <description> per language), or set appcast.releaseNotes to \"page\" (relcast hosts a page per language)",
    );
  }
  return [];
}
