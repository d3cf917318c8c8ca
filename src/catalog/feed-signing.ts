import type { RelcastConfig } from "../config/schema.js";
import type { IndexTrust } from "./catalog-index-signature.js";
import { RelcastError } from "../core/errors.js";
import type { NotesSignature } from "../domain/appcast-item.js";
import type { NotesPage } from "../domain/notes/notes-page.js";
import { signEd25519 } from "../sparkle/ed25519-stream.js";
import { feedSignatureProblem, splitSignedFeed } from "../sparkle/feed-signature.js";
import { KEY_ENV, type SigningKey } from "../sparkle/signing-key.js";

/** What a run knows about signing the appcast: the key it was given, and whether the bundle demands a signed feed. */
export interface FeedSigning {
  key?: SigningKey | undefined;
  /** Why this run must sign whatever the stored feed is, e.g. "SURequireSignedFeed in the bundle's Info.plist". */
  requiredBy?: string | undefined;
  /** The key was already checked against the bundle's SUPublicEDKey (a publish): no check against the stored feed's signature. */
  keyCheckedByBundle?: boolean | undefined;
  /** Where the run says it did not trust the catalog index (see catalog-index-signature.ts); unset: said nowhere. */
  warn?: ((line: string) => void) | undefined;
}

/** How a run with this signing trusts the catalog index: only with a key (which signed it); without one it reads the catalog. */
export function indexTrustOf(signing: FeedSigning): IndexTrust | undefined {
  return signing.key ? { publicKey: signing.key.publicKey, warn: signing.warn ?? (() => {}) } : undefined;
}

/**
 * Why the appcast is signed, or undefined when it is not: `appcast.signedFeed`
 * (true always, false never), else the bundle's SURequireSignedFeed, else a
 * stored appcast that is signed already (as generate_appcast keeps a signed
 * appcast signed).
 *
 * `signedFeed: false` never unsigns a signed appcast: installed copies built
 * with SURequireSignedFeed would refuse the unsigned feed (for 20 days, then
 * update in a restricted mode), and no command but publish reads the
 * bundles to know none is. Every command that renders the appcast (publish,
 * rebuild, yank, unyank, rollout pause/resume, site sync) passes here, so each refuses it
 * before anything is written.
 */
export function signingReason(config: Pick<RelcastConfig, "appcast">, signing: FeedSigning, stored: Buffer | undefined): string | undefined {
  const setting = config.appcast?.signedFeed;
  if (setting === false) {
    if (stored && splitSignedFeed(stored).block) throw signedFeedKept();
    return undefined;
  }
  if (setting === true) return "appcast.signedFeed is true in the config";
  if (signing.requiredBy) return signing.requiredBy;
  if (stored && splitSignedFeed(stored).block) return "the appcast in the store is signed";
  return undefined;
}

/**
 * The key to sign with, checked before anything is written: a run without
 * one stops (E_KEY); a key that does not verify the stored feed's signature
 * (outside a publish, whose key preflight checked against SUPublicEDKey)
 * would make every installed copy refuse the feed, so it stops too.
 */
export async function feedSigningKey(reason: string, signing: FeedSigning, stored: Buffer | undefined): Promise<SigningKey> {
  const key = signing.key;
  if (!key) {
    throw new RelcastError("E_KEY", `the appcast must be signed (${reason}), and no signing key was given`, `pass --key-file <file> or set ${KEY_ENV} to the release key (the one whose public key is the apps' SUPublicEDKey)`);
  }
  if (!signing.keyCheckedByBundle && stored && splitSignedFeed(stored).block && (await feedSignatureProblem(stored, key.publicKey))) {
    throw new RelcastError(
      "E_KEY",
      `the signing key (${key.source}, public key ${key.publicKeyBase64}) does not verify the signature of the appcast in the store; installed copies check the feed with the key they have`,
      "sign with the release key whose public key is the apps' SUPublicEDKey; if the stored appcast was damaged (`relcast verify` says so), remove releases/appcast.xml and run `relcast rebuild` with appcast.signedFeed true",
    );
  }
  return key;
}

/** Each hosted notes page's signature over its exact bytes, by its URL (the link that names it). */
export async function notesPageSignatures(pages: readonly NotesPage[], key: SigningKey): Promise<Map<string, NotesSignature>> {
  const found = new Map<string, NotesSignature>();
  for (const page of pages) found.set(page.url, { edSignature: (await signEd25519(key, page.bytes)).toString("base64"), length: page.bytes.length });
  return found;
}

function signedFeedKept(): RelcastError {
  return new RelcastError(
    "E_CONFIG",
    "the config says appcast.signedFeed false, but the appcast in the store is signed: installed copies whose Info.plist has SURequireSignedFeed would refuse an unsigned feed and stop updating; nothing was written",
    "remove appcast.signedFeed from the config (or set it to true) and pass the release key; only if no published bundle has SURequireSignedFeed, delete releases/appcast.xml and run `relcast rebuild` to publish the feed unsigned",
  );
}
