import { splitSignedFeed } from "../sparkle/feed-signature.js";
import type { RelcastConfig } from "../config/schema.js";
import { viewOfCatalog } from "../catalog/catalog-view.js";
import { appcastOptionsFor, renderAppcast } from "../domain/appcast.js";
import { parseCatalog, serializeCatalog } from "../domain/catalog.js";
import type { Catalog, ReleaseRecord } from "../domain/record-schema.js";
import { APPCAST_KEY, CATALOG_KEY, publicAppcastKey, publicCatalogKey } from "../domain/release-layout.js";
import { sitePages } from "../site/site-pages.js";
import { allArchivePages, archivePageCount, archivePageKey, archivePages } from "../site/archive-pages.js";
import { archivePagesPast } from "../site/archive-plan.js";
import { PAGE_RELEASES } from "../catalog/catalog-view.js";
import type { ObjectStore } from "../store/object-store.js";
import { readAppcast, type FeedChannel } from "./appcast-reader.js";
import { checkFeedAgreement, type FeedExpectations } from "./feed-agreement.js";
import { factDifferences, firstDifference, pageFacts } from "./page-facts.js";
import { describeStep, previousStep, type FeedStep } from "./previous-state.js";
import { strictXmlProblem } from "./strict-xml.js";

/** What the site is rendered from besides the catalog (the config's values). */
export type SiteSettings = Pick<RelcastConfig, "displayName" | "publisher" | "appUrl" | "appcast">;

export interface PublicFeedInputs {
  /** The canonical catalog: its bytes and its parsed form. */
  catalog: { bytes: Buffer; parsed: Catalog };
  /** The canonical appcast's bytes and its channel, when there is one. */
  appcast: { bytes: Buffer; channel: FeedChannel | undefined } | undefined;
  /** From the config; without one, read back from the canonical appcast's channel (which relcast writes from them). */
  settings: SiteSettings | undefined;
  expect: FeedExpectations;
}

export interface PublicFeedFindings {
  problems: string[];
  warnings: string[];
  /** Public copies exactly one change behind the canonical feeds: what a publish leaves between its feeds and site steps. */
  behind: string[];
  /** The releases the public catalog lists (the canonical ones when it cannot be read). */
  listed: readonly ReleaseRecord[];
}

export const REPAIR = "re-run the interrupted publish or `relcast site sync`";
/**
 * The fix for a public copy of a release's object (`downloads/`, a delta, an icon) whose bytes are not what the
 * record pins: a publish cannot rewrite it (versions are immutable) and plain `site sync` judges these copies by
 * size, so the repair mode that hashes them is named.
 */
export const COPY_REPAIR = "run `relcast site sync --repair` (it rewrites each public copy whose bytes differ from its record, from the release's own object once that hashes right)";
/**
 * The fix for a public file with content no publish writes. `site sync`
 * copies the canonical appcast as it is; after a change of displayName or
 * publisher only `rebuild` renders the canonical appcast's channel again,
 * so both are named.
 */
const REWRITE = "`relcast site sync` rewrites it from the canonical feeds, and renders the feeds again first when the config's displayName, publisher or appcast settings changed (or `relcast rebuild`, with --key-file for a signed appcast)";

/**
 * The config values an appcast's channel was rendered from (`renderAppcast`
 * with `appcastOptionsFor`): title "<displayName> updates", description
 * "Updates of <displayName> by <publisher>", link the app URL.
 */
export function settingsFromChannel(channel: FeedChannel | undefined, maxItemsPerChannel: number | undefined): SiteSettings | undefined {
  const title = channel?.title;
  if (!title?.endsWith(" updates") || !channel?.link) return undefined;
  const displayName = title.slice(0, -" updates".length);
  const lead = `Updates of ${displayName} by `;
  if (!channel.description?.startsWith(lead)) return undefined;
  return { displayName, publisher: channel.description.slice(lead.length), appUrl: channel.link, appcast: { maxAppcastItems: maxItemsPerChannel ?? 0 } };
}

/** The public files of one state of the catalog, byte for byte as the site step writes them. */
function renderedState(catalog: Catalog, settings: SiteSettings | undefined, expect: FeedExpectations): Map<string, Buffer> {
  const files = new Map<string, Buffer>();
  if (!settings) return files;
  const view = viewOfCatalog(catalog, "", expect.maxItemsPerChannel);
  files.set(publicAppcastKey(expect.pluginId), Buffer.from(renderAppcast(view.records, appcastOptionsFor(settings))));
  const identity = { ...settings, pluginId: expect.pluginId };
  for (const page of archivePages(identity, catalog.versions, allArchivePages(catalog.versions.length))) files.set(page.key, page.bytes);
  for (const page of sitePages(identity, view)) files.set(page.key, page.bytes);
  return files;
}

/** What is wrong with a page that is neither expected state: the links and checksums it shows, else where its bytes differ. */
function pageDifferences(key: string, body: Buffer, want: Buffer): string[] {
  const found = factDifferences(key, pageFacts(body.toString("utf8")), pageFacts(want.toString("utf8")));
  return found.length > 0 ? found : [`${key} differs from the page relcast renders from the catalog (${firstDifference(body.toString("utf8"), want.toString("utf8"))})`];
}

/** What is wrong with a public appcast that is neither expected state: its items against the records, else where its bytes differ. */
function appcastDifferences(key: string, body: Buffer, records: readonly ReleaseRecord[], want: Buffer, expect: FeedExpectations): string[] {
  const agreement = checkFeedAgreement(records, readAppcast(body.toString("utf8")), expect);
  const found = [...agreement.feed.map((p) => `${key}: ${p}`)];
  for (const [version, result] of agreement.byVersion) for (const p of result.problems) found.push(`${key}: ${version}: ${p}`);
  return found.length > 0 ? found : [`${key} differs from what relcast writes (${firstDifference(body.toString("utf8"), want.toString("utf8"))})`];
}

/**
 * The public catalog, appcast and pages are what the site step writes from
 * the canonical catalog, byte for byte; or, after a publish, yank or unyank
 * stopped between its feeds and site steps, what it wrote from the catalog
 * one change before (a warning). The public catalog is written last, so it
 * tells which: when it is the canonical one, every public file must be
 * current; when it is exactly the previous catalog ({@link previousStep}),
 * each file may be either. Anything else (an item changed, added or removed,
 * an enclosure elsewhere, a page's link or checksum) is a problem.
 */
export async function checkPublicFeeds(store: ObjectStore, inputs: PublicFeedInputs): Promise<PublicFeedFindings> {
  const { pluginId } = inputs.expect;
  const problems: string[] = [];
  const warnings: string[] = [];
  const current = inputs.catalog.parsed;
  const catalogKey = publicCatalogKey(pluginId);
  const publicCatalog = await store.get(catalogKey);
  let listed: readonly ReleaseRecord[] = current.versions;
  let previous: { catalog: Catalog; step: FeedStep } | undefined;
  if (!publicCatalog) problems.push(`${catalogKey} is missing; ${REPAIR}`);
  else if (!publicCatalog.body.equals(inputs.catalog.bytes)) {
    try {
      const parsed = parseCatalog(publicCatalog.body.toString("utf8"), store.uriFor(catalogKey));
      listed = parsed.versions;
      const step = previousStep(current, parsed);
      const laidOut = Buffer.from(serializeCatalog({ pluginId: parsed.pluginId, count: parsed.versions.length, versions: parsed.versions }));
      if ("problem" in step) problems.push(`${catalogKey} differs from ${CATALOG_KEY} and is not the catalog as it was before the last publish, yank or unyank: ${step.problem}; ${REWRITE}`);
      else if (!publicCatalog.body.equals(laidOut)) problems.push(`${catalogKey} is not laid out as relcast writes a catalog (${firstDifference(publicCatalog.body.toString("utf8"), laidOut.toString("utf8"))}); ${REWRITE}`);
      else previous = { catalog: parsed, step };
    } catch (err) {
      problems.push((err as Error).message);
    }
  }
  const settings = inputs.settings ?? settingsFromChannel(inputs.appcast?.channel, inputs.expect.maxItemsPerChannel);
  const want = renderedState(current, settings, inputs.expect);
  // The public appcast is a copy of the canonical one (whatever wrote it), not a second rendering.
  if (inputs.appcast) want.set(publicAppcastKey(pluginId), inputs.appcast.bytes);
  const before = previous ? renderedState(previous.catalog, settings, inputs.expect) : new Map<string, Buffer>();
  const stale: string[] = previous ? [catalogKey] : [];

  const appcastKey = publicAppcastKey(pluginId);
  const keys = [...new Set([appcastKey, ...want.keys()])];
  const bodies = await Promise.all(keys.map((key) => store.get(key)));
  for (const [i, key] of keys.entries()) {
    const body = bodies[i]?.body;
    const wanted = want.get(key);
    if (key === appcastKey && body) {
      const strict = strictXmlProblem(body.toString("utf8"), key);
      if (strict) problems.push(strict);
    }
    if (!body) {
      // A file the state one change back has no place for (the archive page a publish opened) is not there yet either.
      if (wanted && previous && !before.has(key)) stale.push(key);
      else if (wanted) problems.push(`${key} is missing; ${REPAIR}`);
      continue;
    }
    if (!wanted) {
      problems.push(`${key} exists but ${APPCAST_KEY} does not; ${REWRITE}`);
      continue;
    }
    if (body.equals(wanted)) continue;
    // A signed feed one change back is the previous rendering plus its signature block (checked on its own by
    // feed-signature-check.ts): the bytes before the block are compared.
    const previousBytes = before.get(key);
    if (previousBytes && (previousBytes.equals(body) || (key === appcastKey && signedContentIs(body, previousBytes)))) {
      stale.push(key);
      continue;
    }
    // Named against the state the file is closest to (a tampered stale copy against the previous state).
    const states: Array<{ records: readonly ReleaseRecord[]; bytes: Buffer }> = [{ records: current.versions, bytes: wanted }];
    if (previous && before.get(key)) states.push({ records: previous.catalog.versions, bytes: before.get(key)! });
    const named = states.map(({ records, bytes }) => key === appcastKey
      ? appcastDifferences(key, body, records, bytes, inputs.expect)
      : pageDifferences(key, body, bytes));
    const fewest = named.reduce((a, b) => (b.length < a.length ? b : a));
    problems.push(...fewest.map((p) => `${p}; ${REWRITE}`));
  }
  // Every page past the last one (a release is never removed, but a rebuild may list fewer): nothing links it, and it must go.
  const lastPage = Math.max(archivePageCount(current.versions.length), previous ? archivePageCount(previous.catalog.versions.length) : 0);
  // With 50 releases or fewer there are no archive pages at all: "pages 1 to 0" would name a range that does not exist.
  const notAPage = lastPage === 0
    ? `is not an archive page: ${CATALOG_KEY} lists ${current.versions.length} release(s), and archive pages start past ${PAGE_RELEASES}, so the site has none`
    : `is not one of the archive pages 1 to ${lastPage} of ${CATALOG_KEY} (past the last, or a name relcast never writes)`;
  for (const key of await archivePagesPast(store, lastPage)) problems.push(`${key} ${notAPage}; ${REWRITE}`);
  if (!settings) warnings.push(`index.html, changelog.html and the archive pages were not compared with what relcast renders: ${APPCAST_KEY} does not name the display name and publisher; pass --config`);
  const behind = previous && stale.length > 0 ? [`${stale.join(", ")} still ${stale.length === 1 ? "holds" : "hold"} the state before the last change (${describeStep(previous.step)}): ${REPAIR}`] : [];
  return { problems, warnings, behind, listed };
}

/** Whether `body` is a signed feed whose signed bytes (all before its last signature block) are `content`. */
function signedContentIs(body: Buffer, content: Buffer): boolean {
  const split = splitSignedFeed(body);
  return split.block !== undefined && split.content.equals(content);
}
