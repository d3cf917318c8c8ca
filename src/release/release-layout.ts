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

export function versionedKey(version: string, fileName: string): string {
  return `${RELEASES_PREFIX}${version}/${fileName}`;
}

export function latestKey(fileName: string): string {
  return `${LATEST_PREFIX}${fileName}`;
}

export function recordKey(version: string): string {
  return `${RELEASES_PREFIX}${version}/release.json`;
}

export function publicDownloadUrl(appUrl: string, fileName: string): string {
  return `${appUrl}/downloads/${fileName}`;
}

export function publicAppcastUrl(appUrl: string, pluginId: string): string {
  return `${appUrl}/api/v1/plugins/${pluginId}/appcast.xml`;
}

/** Our choice for §4.5 (path not shown in the spec), documented in the README. */
export function publicCatalogUrl(appUrl: string, pluginId: string): string {
  return `${appUrl}/api/v1/plugins/${pluginId}/releases.json`;
}
