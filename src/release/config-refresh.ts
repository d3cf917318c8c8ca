import type { RelcastConfig } from "../config/schema.js";
import { RelcastError } from "../core/errors.js";
import { readCatalogView } from "../catalog/catalog-view.js";
import { signingReason } from "../catalog/feed-signing.js";
import { appcastLimit, appcastOptionsFor, renderAppcast } from "../domain/appcast.js";
import { parseCatalog } from "../domain/catalog.js";
import { APPCAST_KEY, CATALOG_KEY } from "../domain/release-layout.js";
import { splitSignedFeed } from "../sparkle/feed-signature.js";
import type { ObjectStore } from "../store/object-store.js";
import { applyChange } from "./apply-change.js";

/**
 * A signed appcast's content without the signatures only the key can make
 * (each hosted notes page's `sparkle:edSignature` and `sparkle:length`,
 * absent when rendered without the key); everything else (channel, items, their count) must
 * match what the config renders.
 */
function withoutSignatures(text: string): string {
  return text.replace(/\s+sparkle:(?:edSignature|length)="[^"]*"/g, "");
}

/**
 * Whether the config renders another appcast than the store holds: a
 * `displayName`, `publisher`, `appUrl` or `appcast.*` change since the last
 * publish, yank or rebuild. Exact for an unsigned appcast; a signed one is
 * compared without the signatures only the key can make; an unsigned one the
 * config wants signed (`appcast.signedFeed` switched on) is stale.
 */
export async function appcastDrift(store: ObjectStore, config: RelcastConfig): Promise<{ stale: boolean; signed: string | undefined }> {
  const view = await readCatalogView(store, appcastLimit(config));
  const stored = await store.get(APPCAST_KEY);
  if (!view || !stored) return { stale: false, signed: undefined };
  const rendered = Buffer.from(renderAppcast(view.records, appcastOptionsFor(config)));
  const signed = signingReason(config, {}, stored.body);
  if (!signed) return { stale: !stored.body.equals(rendered), signed };
  const split = splitSignedFeed(stored.body);
  // A feed the config wants signed and the store holds unsigned is stale whatever its content.
  if (!split.block) return { stale: true, signed };
  return { stale: withoutSignatures(split.content.toString("utf8")) !== withoutSignatures(rendered.toString("utf8")), signed };
}

/**
 * Before `site sync` writes the pages from the config: when the config
 * changed what the appcast says, the feeds are rendered again from the
 * catalog first (as `rebuild` renders them from the records), so the
 * appcast, its public copy and the pages all show the new values. A signed
 * appcast needs the key for that: refused before anything is written.
 * Returns the actions taken (none when the appcast is current).
 */
export async function refreshFeedsForConfig(store: ObjectStore, config: RelcastConfig): Promise<string[]> {
  const drift = await appcastDrift(store, config);
  if (!drift.stale) return [];
  if (drift.signed) {
    throw new RelcastError(
      "E_KEY",
      `the config renders another appcast than ${store.uriFor(APPCAST_KEY)} holds (displayName, publisher, appUrl or appcast settings, such as signedFeed, changed), and the appcast must be signed (${drift.signed}); nothing was written`,
      "run `relcast rebuild --key-file <your EdDSA key>`: it renders catalog, appcast and pages with this config and signs the appcast",
    );
  }
  const got = await store.get(CATALOG_KEY);
  if (!got) return [];
  const records = parseCatalog(got.body.toString("utf8"), store.uriFor(CATALOG_KEY)).versions;
  const { actions } = await applyChange(store, config, "site sync", { kind: "replace", records }, [], { site: true });
  return actions;
}
