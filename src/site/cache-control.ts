import { ICONS_PREFIX } from "../domain/release-layout.js";
import { CACHE_IMMUTABLE, CACHE_NO_CACHE } from "../store/content-types.js";

/**
 * The Cache-Control relcast gives a key: versioned objects never change (a
 * release's files, its download copies, its icon's public copy under icons/,
 * named by version); everything else (latest, feeds, pages, yank and rollout
 * state) must be revalidated. `relcast serve` sends it for objects stored
 * without one, and verify holds S3 objects to it. Its own file, so verify
 * does not load the server to read it.
 */
export function derivedCacheControl(key: string): string {
  const versioned = /^releases\/(?!latest\/)[^/]+\/(?!(?:yank|rollout)\.json$)[^/]+$/.test(key)
    || /^downloads\/(?!.*-latest\.(dmg|zip|json)$)[^/]+$/.test(key)
    || (key.startsWith(ICONS_PREFIX) && !key.slice(ICONS_PREFIX.length).includes("/") && key.endsWith(".png"));
  return versioned ? CACHE_IMMUTABLE : CACHE_NO_CACHE;
}
