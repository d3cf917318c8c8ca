import { RelcastError } from "../../core/errors.js";
import { parseInfoPlist, type BundleInfo } from "../../bundle/info-plist.js";
import type { CatalogView } from "../../catalog/catalog-entry.js";
import { readStoredInfoPlist } from "../../catalog/stored-bundle.js";
import { publicAppcastUrl, versionedKey, zipFileName } from "../../domain/release-layout.js";
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
  const previous = (catalog?.records ?? [])
    .filter((r) => r.autoupdate && r.version !== inputs.version)
    .sort((a, b) => b.autoupdate!.buildNumber - a.autoupdate!.buildNumber)[0];
  if (!previous) return;
  const zipKey = versionedKey(previous.version, zipFileName(config.pluginId, previous.version));
  // A previous zip that cannot be read is verify's to report; this check needs its Info.plist, and has nothing to compare without one.
  const plist = await readStoredInfoPlist(ctx.store, zipKey).catch(() => undefined);
  const before = plist ? (() => { try { return parseInfoPlist(plist, `Contents/Info.plist in ${zipKey}`); } catch { return undefined; } })() : undefined;
  if (!before) return;
  if (before.bundleIdentifier !== undefined && bundle.bundleIdentifier !== undefined && before.bundleIdentifier !== bundle.bundleIdentifier) {
    throw new RelcastError(
      "E_PLIST",
      `CFBundleIdentifier is ${bundle.bundleIdentifier}, but ${previous.version} (the previous release) is ${before.bundleIdentifier}: Sparkle refuses to install an update with another identifier`,
      `build the bundle with CFBundleIdentifier ${before.bundleIdentifier}, or publish it as another plugin (its own pluginId and store)`,
    );
  }
  if (before.publicEdKey !== undefined && before.publicEdKey !== key.publicKeyBase64) {
    if (!inputs.allowKeyChange) {
      throw new RelcastError(
        "E_KEY",
        `the signing key's public key is ${key.publicKeyBase64}, but ${previous.version} (the previous release) carries SUPublicEDKey ${before.publicEdKey}: installed copies check this update with their key and would reject it`,
        "sign with the key of the previous releases; to rotate the key on purpose, pass --allow-key-change (docs/sparkle.md, \"Rotating the signing key\", says when Sparkle accepts it)",
      );
    }
    logger.warn(`--allow-key-change: ${previous.version} carries SUPublicEDKey ${before.publicEdKey}, this release ${key.publicKeyBase64}; installed copies accept it only if its Apple code signature satisfies theirs`);
    ctx.keyChangeAllowed = true;
  }
}
