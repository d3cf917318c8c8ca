import { RelcastError } from "../../core/errors.js";
import type { BundleInfo } from "../../bundle/info-plist.js";
import type { CatalogView } from "../../catalog/catalog-entry.js";
import { publicAppcastUrl } from "../../domain/release-layout.js";
import { MAX_RELEASES_READ, otherKeyError, storedBundleInfo } from "./release-key.js";
import type { ReleaseContext } from "../release-context.js";

/**
 * What installed copies already hold, checked against the new bundle
 * before anything is written. An installed copy checks an update with the
 * SUPublicEDKey it has, installs it only when its CFBundleIdentifier is its
 * own, and polls the SUFeedURL it was built with:
 * - the previous release's bundle (the highest build in the catalog, read
 *   from its zip in the store) carries another SUPublicEDKey: E_KEY, unless
 *   `--allow-key-change` (then a warning, and the record says so);
 * - it carries another CFBundleIdentifier: E_PLIST;
 * - the new bundle's SUFeedURL is not the public appcast URL: E_PLIST; a
 *   missing SUFeedURL is a warning naming the value to add.
 */
export async function checkContinuity(ctx: ReleaseContext, bundle: BundleInfo, catalog: CatalogView | undefined): Promise<void> {
  const { config, key, inputs, logger } = ctx;
  const feed = publicAppcastUrl(config.appUrl, config.pluginId);
  if (bundle.feedUrl === undefined) {
    logger.warn(`the bundle's Info.plist has no SUFeedURL: installed copies find updates only if the app sets the feed in code; add SUFeedURL = ${feed}`);
  } else if (bundle.feedUrl !== feed) {
    throw new RelcastError(
      "E_PLIST",
      `SUFeedURL in the bundle's Info.plist is ${bundle.feedUrl}, but this plugin's public appcast is ${feed}: installed copies would poll the wrong feed for ever`,
      `set SUFeedURL to ${feed} and rebuild (or fix appUrl/pluginId in the config if the bundle is right)`,
    );
  }
  // Newest build first: the identifier and the key are those of the newest release that has them (a release
  // published without SUPublicEDKey says nothing about the key the ones before it carry).
  const earlier = (catalog?.records ?? [])
    .filter((r) => r.autoupdate && r.version !== inputs.version)
    .sort((a, b) => b.autoupdate!.buildNumber - a.autoupdate!.buildNumber)
    .slice(0, MAX_RELEASES_READ);
  let identifierChecked = false;
  for (const previous of earlier) {
    const before = await storedBundleInfo(ctx.store, config.pluginId, previous.version);
    if (!identifierChecked && before.bundleIdentifier !== undefined) {
      identifierChecked = true;
      if (bundle.bundleIdentifier !== undefined && before.bundleIdentifier !== bundle.bundleIdentifier) {
        throw new RelcastError(
          "E_PLIST",
          `CFBundleIdentifier is ${bundle.bundleIdentifier}, but ${previous.version} (the previous release) is ${before.bundleIdentifier}: Sparkle refuses to install an update with another identifier`,
          `build the bundle with CFBundleIdentifier ${before.bundleIdentifier}, or publish it as another plugin (its own pluginId and store)`,
        );
      }
    }
    if (before.publicEdKey === undefined) continue;
    if (before.publicEdKey !== key.publicKeyBase64) {
      if (!inputs.allowKeyChange) {
        throw otherKeyError(key, `${previous.version} (the newest earlier release with a key) carries SUPublicEDKey`, before.publicEdKey, "this update");
      }
      logger.warn(`--allow-key-change: ${previous.version} carries SUPublicEDKey ${before.publicEdKey}, this release ${key.publicKeyBase64}; installed copies accept it only if its Apple code signature satisfies theirs`);
      ctx.keyChangeAllowed = true;
    }
    return;
  }
}
