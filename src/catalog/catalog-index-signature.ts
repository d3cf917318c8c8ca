import { signEd25519, verifyEd25519Buffered } from "../sparkle/ed25519-stream.js";
import type { SigningKey } from "../sparkle/signing-key.js";
import type { ObjectStore } from "../store/object-store.js";
import { CATALOG_INDEX_KEY, markIndexed, readIndexText, type IndexedView, type ReadIndex } from "./catalog-index.js";

/**
 * The catalog index is a cache a run may trust in place of the catalog, so
 * it is signed with the release key (the one whose public key is the apps'
 * SUPublicEDKey), like a signed appcast: Ed25519 over the file's exact bytes
 * with the head's last field, `"signature"`, empty. The signature is made
 * after the catalog's ETag is stamped in, so it covers the ETag too: an old
 * signed index cannot be re-labelled for the current catalog.
 *
 * Only the key a run holds can vouch for an index: an unsigned one (an older
 * relcast), one signed by another key (the key was changed) or one whose
 * signature fails is not used; the run reads the catalog instead, says so in
 * one warning line, and writes a new index signed with its key. So changing
 * keys costs one full read of the catalog, never a stuck publish.
 */

/** What a run needs to trust the index: its own public key, and where to say it did not. */
export interface IndexTrust {
  publicKey: Uint8Array;
  warn(line: string): void;
}

const PLACEHOLDER = ',"signature":"","entries":[\n';

/** Fills in the signature of an index {@link serializeCatalogIndex} wrote (with its ETag stamped in). */
export async function signCatalogIndex(text: string, key: SigningKey): Promise<string> {
  const at = text.indexOf("\n") + 1;
  if (!text.slice(0, at).endsWith(PLACEHOLDER) || !text.includes(`"publicKey":${JSON.stringify(key.publicKeyBase64)}`)) {
    throw new Error("pipeline bug: the catalog index to sign is not an unsigned index for this key");
  }
  const signature = (await signEd25519(key, Buffer.from(text))).toString("base64");
  return `${text.slice(0, at - PLACEHOLDER.length)},"signature":${JSON.stringify(signature)}${text.slice(at - PLACEHOLDER.length + ',"signature":""'.length)}`;
}

/** Why an index that reads well cannot be trusted with `publicKey`; undefined: its signature is good. */
export async function indexSignatureProblem(read: Extract<ReadIndex, { ok: true }>, publicKey: Uint8Array): Promise<string | undefined> {
  const mine = Buffer.from(publicKey).toString("base64");
  const { seal } = read;
  if (seal.signature === "") return "it is not signed";
  if (seal.publicKey !== mine) return `it is signed by another key (public key ${seal.publicKey}), not by this key (${mine})`;
  const ok = await verifyEd25519Buffered(publicKey, Buffer.from(seal.signature, "base64"), Buffer.from(seal.signed));
  return ok ? undefined : "its signature does not verify (it was changed after it was signed)";
}

/**
 * The view the store's index holds, when it describes the catalog with this
 * ETag under this appcast limit and this run's key signed it; else undefined
 * (read the catalog). An index for another catalog is stale, not suspect
 * (a run stopped between the catalog and the index, or had no key): no word.
 */
export async function readTrustedIndex(store: ObjectStore, catalogEtag: string, limit: number | undefined, trust: IndexTrust): Promise<IndexedView | undefined> {
  const got = await store.get(CATALOG_INDEX_KEY);
  if (!got) return undefined;
  const read = readIndexText(got.body.toString("utf8"));
  // Unreadable (no ETag to tell) or for this catalog: refused aloud.
  if (read.catalogEtag !== undefined && (read.catalogEtag !== catalogEtag || read.limit !== limit)) return undefined;
  const problem = read.ok ? await indexSignatureProblem(read, trust.publicKey) : read.why;
  if (problem === undefined && read.ok) return markIndexed(read.view);
  trust.warn(`not using ${store.uriFor(CATALOG_INDEX_KEY)}: ${problem}; reading the catalog in full instead (this run writes a new index signed with its key)`);
  return undefined;
}
