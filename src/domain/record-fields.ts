/**
 * The rules for values that become parts of object keys, file names, URLs
 * and feeds. One place, used by the config schema (input), the record schema
 * (store data) and the checks between them, so nothing read from a store can
 * name a path relcast would not have written itself.
 */
import semver from "semver";
import { PLUGIN_ID_MAX_LENGTH, PLUGIN_ID_PATTERN } from "../config/schema.js";

export { CHANNEL_PATTERN, PLUGIN_ID_MAX_LENGTH, PLUGIN_ID_PATTERN } from "../config/schema.js";
export { isHttpUrl } from "../core/http-url.js";

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
