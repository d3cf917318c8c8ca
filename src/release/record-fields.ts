import semver from "semver";

/**
 * The rules for values that become parts of object keys, file names, URLs
 * and feeds. One place, used by the config schema (input), the record schema
 * (store data) and the checks between them, so nothing read from a store can
 * name a path relcast would not have written itself.
 */
export const PLUGIN_ID_PATTERN = /^[a-z0-9][a-z0-9._-]*$/;
/** A plugin id becomes part of every file name (`<id>-<version>-latest.json` and friends): 64 keeps those far below 255 bytes. */
export const PLUGIN_ID_MAX_LENGTH = 64;
export const CHANNEL_PATTERN = /^[A-Za-z0-9._-]+$/;
/** semver allows 256; a version is a key segment and part of file names. */
export const VERSION_MAX_LENGTH = 128;
/** One file name inside `releases/<version>/` or `downloads/`: no separators, no dot segments, no hidden names. */
export const SAFE_FILE_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,199}$/;

export function isPluginId(value: string): boolean {
  return value.length <= PLUGIN_ID_MAX_LENGTH && PLUGIN_ID_PATTERN.test(value);
}

/** A strict semver without build metadata, exactly as `normalizeVersion` returns it: safe as a key segment. */
export function isReleaseVersion(value: string): boolean {
  return value.length <= VERSION_MAX_LENGTH && !value.includes("+") && semver.valid(value) === value;
}

export function isSafeFileName(value: string): boolean {
  return SAFE_FILE_NAME.test(value) && !value.includes("..");
}

/** An absolute http(s) URL with a host, and no white space or control characters that a parser would quietly drop or encode. */
export function isHttpUrl(value: string): boolean {
  if (/[\u0000-\u0020\u007f-\u009f]/.test(value)) return false;
  try {
    const url = new URL(value);
    return (url.protocol === "http:" || url.protocol === "https:") && url.hostname !== "" && /^https?:\/\//i.test(value);
  } catch {
    return false;
  }
}
