import { RelcastError } from "../../core/errors.js";
import { parseInfoPlist, type BundleInfo } from "../../bundle/info-plist.js";
import { CATALOG_INDEX_KEY, readIndexText } from "../../catalog/catalog-index.js";
import { readStoredInfoPlist } from "../../catalog/stored-bundle.js";
import { versionedKey, zipFileName } from "../../domain/release-layout.js";
import type { SigningKey } from "../../sparkle/signing-key.js";
import type { ObjectStore } from "../../store/object-store.js";

/**
 * The one rule for "is this the app's key?", shared by publish (preflight's
 * continuity check) and by every other command that signs something in the
 * store (yank, unyank, rollout pause/resume, rebuild: the appcast, its notes
 * pages, the catalog index). Installed copies check updates and a signed
 * feed with the SUPublicEDKey they hold, the one in the newest bundle that
 * has one; a run signing with another key would make every copy refuse what
 * it writes (and `relcast verify` say "signed by another key"). A deliberate
 * change of key is made by a publish with --allow-key-change, whose bundle
 * then carries the new key: from then on it is the app's key.
 */

/** A release to look at, newest first: its version and build number. */
export interface KeyedRelease {
  version: string;
  build: number;
}

/** Earlier releases read, newest first, looking for the key their bundles carry. */
export const MAX_RELEASES_READ = 10;

/** A release's Info.plist, from its zip in the store; one that cannot be read stops the run (the check cannot be made). */
export async function storedBundleInfo(store: ObjectStore, pluginId: string, version: string): Promise<BundleInfo> {
  const zipKey = versionedKey(version, zipFileName(pluginId, version));
  let why: string;
  try {
    const plist = await readStoredInfoPlist(store, zipKey);
    if (plist) return parseInfoPlist(plist, `Contents/Info.plist in ${zipKey}`);
    why = "the zip or its Contents/Info.plist is missing";
  } catch (err) {
    if (err instanceof RelcastError && err.code === "E_STORE") throw err;
    why = (err as Error).message;
  }
  throw new RelcastError(
    "E_STORE",
    `cannot read the bundle of ${version}, a published release, from ${zipKey} (${why}): relcast checks the signing key against the SUPublicEDKey installed copies hold, and cannot without it`,
    "run relcast verify to see what is wrong with the store, repair it, and run the command again",
  );
}

/** The refusal of a key that is not the one installed copies hold; `what` is where that key was found. */
export function otherKeyError(key: SigningKey, what: string, theirs: string, writes: string): RelcastError {
  return new RelcastError(
    "E_KEY",
    `the signing key (${key.source}) has public key ${key.publicKeyBase64}, but ${what} ${theirs}: installed copies check ${writes} with their key and would reject it; nothing was written`,
    `sign with the release key whose public key is ${theirs} (relcast keys public --key-file <file> prints a key's); to change the key on purpose, publish a release whose bundle carries the new SUPublicEDKey with \`relcast publish --allow-key-change\` (docs/sparkle.md, "Rotating the signing key")`,
  );
}

/**
 * Before a command other than publish writes anything it signs: the key
 * must be the SUPublicEDKey of the newest release whose bundle carries one
 * (`releases`, any order); when none does, the key the stored catalog index
 * is signed with, if it is. (A signed appcast in the store is checked
 * against the key where it is re-signed, feed-signing.ts.)
 */
export async function checkAppKey(store: ObjectStore, pluginId: string, key: SigningKey, releases: Iterable<KeyedRelease>): Promise<void> {
  const newest = [...releases].sort((a, b) => b.build - a.build).slice(0, MAX_RELEASES_READ);
  for (const release of newest) {
    const info = await storedBundleInfo(store, pluginId, release.version);
    if (info.publicEdKey === undefined) continue;
    if (info.publicEdKey !== key.publicKeyBase64) throw otherKeyError(key, `${release.version} (the newest release whose bundle has one) carries SUPublicEDKey`, info.publicEdKey, "the appcast, its notes pages and the catalog index");
    return;
  }
  const index = await store.get(CATALOG_INDEX_KEY);
  if (!index) return;
  const read = readIndexText(index.body.toString("utf8"));
  if (read.ok && read.seal.signature !== "" && read.seal.publicKey !== key.publicKeyBase64) {
    throw otherKeyError(key, `no published bundle has SUPublicEDKey, and ${store.uriFor(CATALOG_INDEX_KEY)} is signed with public key`, read.seal.publicKey, "the catalog index");
  }
}
