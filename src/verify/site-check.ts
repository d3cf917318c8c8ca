import { latestDownloadStateBytes } from "../site/site-plan.js";
import { expectedLatest } from "../domain/latest-choice.js";
import type { ReleaseRecord } from "../domain/record-schema.js";
import {
  CATALOG_KEY,
  CHANGELOG_KEY, deltaFileName, downloadKey, INDEX_KEY, latestDownloadName, latestDownloadStateKey, publicAppcastKey, publicCatalogKey, versionedKey, zipFileName,
  appUrlOfPublicAppcastUrl,
} from "../domain/release-layout.js";
import { signatureProblem } from "./appcast-reader.js";
import { checkPublicFeeds, COPY_REPAIR, REPAIR, type PublicFeedInputs } from "./public-feeds.js";
import type { ObjectStore } from "../store/object-store.js";
import { downloadObject, IN_MEMORY_BYTES, signatureHolds, type HashTally } from "./download-object.js";
import { runPool } from "./run-pool.js";
import { iconProblems } from "./icon-check.js";
import { publicInventory } from "./public-inventory.js";

export interface SiteFindings {
  problems: string[];
  /** What an interrupted publish leaves (public copies behind the canonical feeds) while one may still be running; a re-run or `relcast site sync` clears it. */
  warnings: string[];
}

/**
 * How long public copies may stay one change behind the canonical feeds
 * before verify calls it a problem. A publish writes its feeds and then
 * its site step (the public feeds, pages and stable latest downloads) at
 * once; even server-side copies of multi-GiB downloads take minutes, not a
 * quarter of an hour. Past this, no run is finishing it, and installed
 * copies reading the public feed do not see the change (a new release, or
 * a yank that should stop offering a build).
 */
export const BEHIND_SETTLES_AFTER_MS = 15 * 60_000;

/** The "one change behind" findings: warnings while a publish may still be running, problems once the change is older than the window. */
async function reportBehind(store: ObjectStore, behind: readonly string[], found: SiteFindings): Promise<void> {
  if (behind.length === 0) return;
  const changedAt = (await store.head(CATALOG_KEY))?.lastModified;
  const age = changedAt === undefined ? undefined : Date.now() - changedAt.getTime();
  if (age === undefined || age <= BEHIND_SETTLES_AFTER_MS) {
    found.warnings.push(...behind);
    return;
  }
  const since = `the last change to ${CATALOG_KEY} was made at ${changedAt!.toISOString()}, ${Math.round(age / 60_000)} minutes ago, so no publish is still finishing it (installed copies reading the public feed do not see that change)`;
  found.problems.push(...behind.map((b) => `${b}; ${since}`));
}

interface Artifact {
  name: string;
  sizeBytes: number;
  sha256: string | undefined;
  /** The release's own object this is a public copy of (a folder store links the copy to it). */
  original: string;
  /** A delta update's: its edSignature, checked over the public copy too. */
  edSignature?: string;
}

/** The disk image and (when there is one) the update zip a record pins, by file name, size and SHA-256. */
export function artifactsOf(r: ReleaseRecord): Artifact[] {
  const found: Artifact[] = [{ name: r.objectStore.artifactFileName, sizeBytes: r.sizeBytes, sha256: r.sha256, original: r.objectStore.objectPath }];
  const zip = zipFileName(r.pluginId, r.version);
  if (r.autoupdate) found.push({ name: zip, sizeBytes: r.autoupdate.sizeBytes, sha256: r.autoupdate.sha256, original: versionedKey(r.version, zip) });
  return found;
}

/**
 * Hashes one public object and compares it with what a record pins; a problem sentence, or undefined when it matches.
 * A copy that is the very file of the release's own object (a folder store's hard link), hashed already, is not read again.
 */
async function hashProblem(store: ObjectStore, key: string, want: Artifact, whose: string, tally: HashTally, missing = `${key} is missing`): Promise<string | undefined> {
  const got = await downloadObject(store, key, { tally, sameAs: [want.original] });
  if (!got) return (await folderAt(store, key)) ?? missing;
  if (got.sizeBytes !== want.sizeBytes) return `${key} is ${got.sizeBytes} bytes; ${whose} says ${want.sizeBytes}`;
  if (want.sha256 !== undefined && got.sha256 !== want.sha256) return `${key} has SHA-256 ${got.sha256.slice(0, 12)}…; ${whose} says ${want.sha256.slice(0, 12)}…`;
  return undefined;
}

/**
 * A folder (on S3: keys under `key/`) where a public copy belongs: no copy can be written there until it goes,
 * so it is named as such, with its fix, rather than as a missing copy.
 */
async function folderAt(store: ObjectStore, key: string): Promise<string | undefined> {
  for await (const inside of store.list(`${key}/`)) {
    return `${key} is a folder (holding ${inside.key}), where an object belongs: no copy can be written there; remove that folder (look at what is in it first), then run \`relcast site sync\``;
  }
  return undefined;
}

/** Whether the release's own object still holds what its record pins (the source a repair copies from). */
async function originalHolds(store: ObjectStore, want: Artifact, tally: HashTally): Promise<boolean> {
  const got = await downloadObject(store, want.original, { tally: { objects: 0, bytes: 0, ...(tally.memo ? { memo: tally.memo } : {}) }, sameAs: [want.original] });
  return Boolean(got && got.sizeBytes === want.sizeBytes && (want.sha256 === undefined || got.sha256 === want.sha256));
}

/** The fix for a public copy whose bytes are wrong: the repair, or, when its source is damaged too, the backup first. */
async function copyFix(store: ObjectStore, want: Artifact, tally: HashTally): Promise<string> {
  if (await originalHolds(store, want, tally)) return COPY_REPAIR;
  return `its source ${want.original} does not hold the record's bytes either (or is missing), so \`relcast site sync --repair\` cannot rewrite it: restore ${want.original} from a backup first, then run \`relcast site sync --repair\``;
}

/** The delta updates a record names, as the public copies `downloads/<id>-<v>-from-<old>.delta` that its appcast item links. */
export function deltaArtifactsOf(r: ReleaseRecord): Artifact[] {
  return (r.autoupdate?.deltas ?? []).map((d) => {
    const name = deltaFileName(r.pluginId, r.version, d.fromVersion);
    return { name, sizeBytes: d.sizeBytes, sha256: d.sha256, edSignature: d.edSignature, original: versionedKey(r.version, name) };
  });
}

/**
 * A public delta copy: size and SHA-256 as the record pins them, and its
 * edSignature verifying over the copy's bytes (what Sparkle checks before it
 * applies a delta), read once.
 */
async function deltaCopyProblems(store: ObjectStore, key: string, want: Artifact, whose: string, key32: Buffer | undefined, tally: HashTally): Promise<string[]> {
  const syntax = signatureProblem(want.edSignature);
  const signature = syntax ? undefined : Buffer.from(want.edSignature!.trim(), "base64");
  const ed25519 = key32 && signature ? { publicKey: key32, signature } : undefined;
  const got = await downloadObject(store, key, { tally, keepUpTo: IN_MEMORY_BYTES, ...(ed25519 ? { ed25519 } : {}) });
  if (!got) return [`${key} is missing, but the appcast item of ${whose.replace(/^the record of /, "")} names it; ${REPAIR}`];
  const found: string[] = [];
  if (got.sizeBytes !== want.sizeBytes) found.push(`${key} is ${got.sizeBytes} bytes; ${whose} says ${want.sizeBytes}; ${await copyFix(store, want, tally)}`);
  else if (want.sha256 !== undefined && got.sha256 !== want.sha256) found.push(`${key} has SHA-256 ${got.sha256.slice(0, 12)}…; ${whose} says ${want.sha256.slice(0, 12)}…; ${await copyFix(store, want, tally)}`);
  if (syntax) found.push(`${key}: ${syntax}`);
  else if (ed25519 && (await signatureHolds(got, ed25519)) !== true) {
    found.push(`${key}: the edSignature ${whose} gives does not verify over it with public key ${ed25519.publicKey.toString("base64")}`);
  }
  return found;
}

/**
 * Every download a public catalog names is there, byte for byte the
 * artifact its record pins (size and SHA-256), and so is every delta update
 * its appcast items name (with its signature checked).
 */
async function downloadProblems(store: ObjectStore, records: readonly ReleaseRecord[], tally: HashTally, keyOf: ((version: string) => Buffer | undefined) | undefined): Promise<string[]> {
  // Four objects in flight, as for the releases: their digests run on the thread pool while the next are read.
  const checks = records.flatMap((r) => [
    ...artifactsOf(r).map((artifact) => ({ r, artifact, delta: false })),
    ...deltaArtifactsOf(r).map((artifact) => ({ r, artifact, delta: true })),
  ]);
  const problems = await runPool(checks, 4, async ({ r, artifact, delta }) => {
    const key = downloadKey(artifact.name);
    if (delta) return deltaCopyProblems(store, key, artifact, `the record of ${r.version}`, keyOf?.(r.version), tally);
    const problem = await hashProblem(store, key, artifact, `the record of ${r.version}`, tally, `${key} is missing, but the public catalog lists ${r.version}`);
    if (!problem) return [];
    if (problem.includes("where an object belongs")) return [problem];
    return [`${problem}; ${problem.endsWith(`lists ${r.version}`) ? REPAIR : await copyFix(store, artifact, tally)}`];
  });
  return problems.flat();
}

/**
 * The stable latest downloads (`downloads/<id>-latest.dmg|.zip`) are byte for
 * byte the expected latest release's artifacts; after an interrupted publish
 * they may still be those of the release the state file names (a warning).
 */
async function latestDownloadFindings(store: ObjectStore, pluginId: string, want: ReleaseRecord, holds: ReleaseRecord | undefined, tally: HashTally, found: SiteFindings, behind: string[]): Promise<void> {
  const exts: Array<"dmg" | "zip"> = ["dmg", ...(want.autoupdate ? ["zip" as const] : [])];
  for (const [i, ext] of exts.entries()) {
    const key = downloadKey(latestDownloadName(pluginId, ext));
    const problem = await hashProblem(store, key, artifactsOf(want)[i]!, `the latest release ${want.version}`, tally);
    if (!problem) continue;
    const older = holds && holds !== want ? artifactsOf(holds)[i] : undefined;
    if (older && !(await hashProblem(store, key, older, `the record of ${holds!.version}`, tally))) {
      behind.push(`${key} still holds ${holds!.version}, not ${want.version}: ${REPAIR}`);
    } else found.problems.push(`${problem}; ${REPAIR}`);
  }
}

export interface SiteInputs extends Omit<PublicFeedInputs, "expect"> {
  maxItemsPerChannel?: number | undefined;
  appUrl?: string | undefined;
  /** The key each release's signatures are checked with (--public-key, else the one its archive ships). */
  keyOf?: (version: string) => Buffer | undefined;
  /** Every object's name in the inventory lines, not the first four (`--json`). */
  listAll?: boolean | undefined;
}

/**
 * The public site (docs/site.md): the public feeds and pages are what the
 * site step writes from the canonical catalog (or, after an interrupted
 * publish, exactly from the one before it), and every file the public
 * catalog names, and the stable latest downloads, is there byte for byte.
 */
export async function checkSite(store: ObjectStore, pluginId: string, records: readonly ReleaseRecord[], inputs: SiteInputs, tally: HashTally = { objects: 0, bytes: 0 }): Promise<SiteFindings> {
  const found: SiteFindings = { problems: [], warnings: [] };
  // A store relcast wrote before 0.2 has none of the site's files; one that has any of them (a download
  // copy included: the downloads step came with the site) had a site, and every missing file is a problem.
  const siteKeys = [publicCatalogKey(pluginId), publicAppcastKey(pluginId), INDEX_KEY, CHANGELOG_KEY, latestDownloadStateKey(pluginId), ...records.slice(0, 1).map((r) => downloadKey(r.objectStore.artifactFileName))];
  const present = await Promise.all(siteKeys.map((key) => store.head(key)));
  if (present.every((head) => !head)) {
    if (records.length > 0) found.warnings.push(`the store has no public site (written by relcast before 0.2); run \`relcast site sync\``);
    return found;
  }
  const feeds = await checkPublicFeeds(store, { ...inputs, expect: { pluginId, appUrl: inputs.appUrl, maxItemsPerChannel: inputs.maxItemsPerChannel } });
  found.problems.push(...feeds.problems);
  found.warnings.push(...feeds.warnings);
  const behind = [...feeds.behind];
  const listed = feeds.listed;
  found.problems.push(...(await downloadProblems(store, listed, tally, inputs.keyOf)));
  found.problems.push(...(await iconProblems(store, listed, tally, { missing: REPAIR, bytes: COPY_REPAIR })));
  const inventory = await publicInventory(store, pluginId, [...records, ...listed], inputs.appUrl ?? (records[0] && appUrlOfPublicAppcastUrl(records[0].publicAppcastUrl, pluginId)), inputs.listAll === true);
  found.problems.push(...inventory.problems);
  found.warnings.push(...inventory.warnings);
  const want = expectedLatest(records);
  if (want) {
    const state = await store.get(latestDownloadStateKey(pluginId));
    let holds: string | undefined;
    try {
      holds = state ? (JSON.parse(state.body.toString("utf8")) as { version?: string }).version : undefined;
    } catch {
      holds = undefined;
    }
    const holdsRecord = [...records, ...listed].find((r) => r.version === holds);
    await latestDownloadFindings(store, pluginId, want, holdsRecord, tally, found, behind);
    // The state is always exactly what the site step writes for some release: for the latest one, or (a publish
    // interrupted before its site step) for the one before. Any other bytes were not written by relcast.
    const writtenFor = holds === want.version ? want : holdsRecord;
    if (state && !(writtenFor && state.body.equals(latestDownloadStateBytes(writtenFor)))) {
      const named = holds === undefined ? "is not valid state JSON" : writtenFor ? `is not the state the site step writes for ${holds} (its checksums or fields differ)` : `names ${JSON.stringify(holds)}, which no release in the catalog is`;
      found.problems.push(`${latestDownloadStateKey(pluginId)} ${named}: ${REPAIR}`);
    } else if (holds !== want.version && found.problems.length === 0) behind.push(`the stable latest downloads state says ${holds ?? "an unknown version"}, not ${want.version}: ${REPAIR}`);
  }
  await reportBehind(store, behind, found);
  return found;
}
