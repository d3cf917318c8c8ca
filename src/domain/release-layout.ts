/**
 * Every object key and public URL of a release, in the spec's forms (§2.6,
 * §4.6, §4.7). One place, so records, plans and the site agree.
 */
export const RELEASES_PREFIX = "releases/";
export const CATALOG_KEY = "releases/catalog.json";
export const APPCAST_KEY = "releases/appcast.xml";
export const LATEST_PREFIX = "releases/latest/";

export function dmgFileName(pluginId: string, version: string): string {
  return `${pluginId}-${version}.dmg`;
}

export function zipFileName(pluginId: string, version: string): string {
  return `${pluginId}-${version}.zip`;
}

/** A delta update's file: names the release it updates to and the one it updates from. */
export function deltaFileName(pluginId: string, version: string, fromVersion: string): string {
  return `${pluginId}-${version}-from-${fromVersion}.delta`;
}

/** The bundle's icon as a PNG (the largest image of its .icns), beside the release's other files. */
export function iconFileName(pluginId: string, version: string): string {
  return `${pluginId}-${version}-icon.png`;
}

export function versionedKey(version: string, fileName: string): string {
  return `${RELEASES_PREFIX}${version}/${fileName}`;
}

export function latestKey(fileName: string): string {
  return `${LATEST_PREFIX}${fileName}`;
}

export function recordKey(version: string): string {
  return `${RELEASES_PREFIX}${version}/release.json`;
}

/**
 * What later deltas need about this release's tree (paths, modes, sizes,
 * content hashes, link targets, Sparkle's tree hash), beside the record;
 * immutable like it. Our choice, documented in docs/sparkle.md.
 */
export function treeManifestKey(version: string): string {
  return `${RELEASES_PREFIX}${version}/tree.json`;
}

export function publicDownloadUrl(appUrl: string, fileName: string): string {
  return `${appUrl}/downloads/${fileName}`;
}

export function publicAppcastUrl(appUrl: string, pluginId: string): string {
  return `${appUrl}/api/v1/plugins/${pluginId}/appcast.xml`;
}

/** The appUrl a record's public appcast URL was made from (`publicAppcastUrl` read backwards); undefined when it is not one. */
export function appUrlOfPublicAppcastUrl(url: string, pluginId: string): string | undefined {
  const tail = `/api/v1/plugins/${pluginId}/appcast.xml`;
  return url.endsWith(tail) ? url.slice(0, -tail.length) : undefined;
}

/** Our choice for §4.5 (path not shown in the spec), documented in the README. */
export function publicCatalogUrl(appUrl: string, pluginId: string): string {
  return `${appUrl}/api/v1/plugins/${pluginId}/releases.json`;
}

/**
 * The public site (our choice for a plain static host, documented in
 * docs/site.md): the store's root is `{app_url}`, and these keys answer the
 * public URLs of the records as files.
 */
export const DOWNLOADS_PREFIX = "downloads/";
export const INDEX_KEY = "index.html";
export const CHANGELOG_KEY = "changelog.html";

export function publicApiPrefix(pluginId: string): string {
  return `api/v1/plugins/${pluginId}/`;
}

export function publicAppcastKey(pluginId: string): string {
  return `${publicApiPrefix(pluginId)}appcast.xml`;
}

export function publicCatalogKey(pluginId: string): string {
  return `${publicApiPrefix(pluginId)}releases.json`;
}

/** Public copies of the releases' icons (docs/site.md): the downloads page shows the latest one. */
export const ICONS_PREFIX = "icons/";

export function iconKey(fileName: string): string {
  return `${ICONS_PREFIX}${fileName}`;
}

export function downloadKey(fileName: string): string {
  return `${DOWNLOADS_PREFIX}${fileName}`;
}

/** The stable "latest" download names, e.g. `bridge-plugin-latest.dmg`. */
export function latestDownloadName(pluginId: string, extension: "dmg" | "zip"): string {
  return `${pluginId}-latest.${extension}`;
}

/** Which version the stable latest downloads hold, written after them. */
export function latestDownloadStateKey(pluginId: string): string {
  return `${DOWNLOADS_PREFIX}${pluginId}-latest.json`;
}

/**
 * Release-notes pages relcast hosts (config `appcast.releaseNotes: "page"`, our
 * choice, documented in docs/sparkle.md): `{app_url}/release-notes/<version>.html`.
 */
export const RELEASE_NOTES_PREFIX = "release-notes/";

export function releaseNotesPageKey(version: string): string {
  return `${RELEASE_NOTES_PREFIX}${version}.html`;
}

export function releaseNotesPageUrl(appUrl: string, version: string): string {
  return `${appUrl}/${releaseNotesPageKey(version)}`;
}

/**
 * One language's page of a release's notes: `release-notes/<lang>/<version>.html`. A folder per language,
 * so no version's default page can ever share a name with another version's localized one.
 */
export function localizedNotesPageKey(version: string, lang: string): string {
  return `${RELEASE_NOTES_PREFIX}${lang}/${version}.html`;
}

export function localizedNotesPageUrl(appUrl: string, version: string, lang: string): string {
  return `${appUrl}/${localizedNotesPageKey(version, lang)}`;
}

/** A yank is its own object: records are create-once and never rewritten. */
export function yankKey(version: string): string {
  return `${RELEASES_PREFIX}${version}/yank.json`;
}

/** The state of a phased rollout's pauses, beside the create-once record like a yank marker. */
export function rolloutKey(version: string): string {
  return `${RELEASES_PREFIX}${version}/rollout.json`;
}
