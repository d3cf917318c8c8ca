import { parseCatalog } from "../domain/catalog.js";
import { expectedLatest } from "../domain/latest-choice.js";
import type { ReleaseRecord } from "../domain/record-schema.js";
import {
  APPCAST_KEY, CATALOG_KEY, downloadKey, INDEX_KEY, latestDownloadName, latestDownloadStateKey, publicAppcastKey, publicCatalogKey, zipFileName,
} from "../domain/release-layout.js";
import type { ObjectStore } from "../store/object-store.js";
import { downloadObject, type HashTally } from "./download-object.js";
import { runPool } from "./run-pool.js";
import { strictXmlProblem } from "./strict-xml.js";

export interface SiteFindings {
  problems: string[];
  /** What an interrupted publish leaves (public copies behind the canonical feeds); a re-run or `relcast site sync` clears it. */
  warnings: string[];
}

const REPAIR = "re-run the interrupted publish or `relcast site sync`";

interface Artifact {
  name: string;
  sizeBytes: number;
  sha256: string | undefined;
}

/** The disk image and (when there is one) the update zip a record pins, by file name, size and SHA-256. */
export function artifactsOf(r: ReleaseRecord): Artifact[] {
  const found: Artifact[] = [{ name: r.objectStore.artifactFileName, sizeBytes: r.sizeBytes, sha256: r.sha256 }];
  if (r.autoupdate) found.push({ name: zipFileName(r.pluginId, r.version), sizeBytes: r.autoupdate.sizeBytes, sha256: r.autoupdate.sha256 });
  return found;
}

/** Hashes one public object and compares it with what a record pins; a problem sentence, or undefined when it matches. */
async function hashProblem(store: ObjectStore, key: string, want: Artifact, whose: string, tally: HashTally, missing = `${key} is missing`): Promise<string | undefined> {
  const got = await downloadObject(store, key, tally ? { tally } : {});
  if (!got) return missing;
  if (got.sizeBytes !== want.sizeBytes) return `${key} is ${got.sizeBytes} bytes; ${whose} says ${want.sizeBytes}`;
  if (want.sha256 !== undefined && got.sha256 !== want.sha256) return `${key} has SHA-256 ${got.sha256.slice(0, 12)}…; ${whose} says ${want.sha256.slice(0, 12)}…`;
  return undefined;
}

/** Every download a public catalog names is there, byte for byte the artifact its record pins (size and SHA-256). */
async function downloadProblems(store: ObjectStore, records: readonly ReleaseRecord[], tally: HashTally): Promise<string[]> {
  // Four objects in flight, as for the releases: their digests run on the thread pool while the next are read.
  const checks = records.flatMap((r) => artifactsOf(r).map((artifact) => ({ r, artifact })));
  const problems = await runPool(checks, 4, ({ r, artifact }) =>
    hashProblem(store, downloadKey(artifact.name), artifact, `the record of ${r.version}`, tally, `${downloadKey(artifact.name)} is missing, but the public catalog lists ${r.version}`));
  return problems.filter((p): p is string => p !== undefined);
}

/**
 * The stable latest downloads (`downloads/<id>-latest.dmg|.zip`) are byte for
 * byte the expected latest release's artifacts; after an interrupted publish
 * they may still be those of the release the state file names (a warning).
 */
async function latestDownloadFindings(store: ObjectStore, pluginId: string, want: ReleaseRecord, holds: ReleaseRecord | undefined, tally: HashTally, found: SiteFindings): Promise<void> {
  const exts: Array<"dmg" | "zip"> = ["dmg", ...(want.autoupdate ? ["zip" as const] : [])];
  for (const [i, ext] of exts.entries()) {
    const key = downloadKey(latestDownloadName(pluginId, ext));
    const problem = await hashProblem(store, key, artifactsOf(want)[i]!, `the latest release ${want.version}`, tally);
    if (!problem) continue;
    const older = holds && holds !== want ? artifactsOf(holds)[i] : undefined;
    if (older && !(await hashProblem(store, key, older, `the record of ${holds!.version}`, tally))) {
      found.warnings.push(`${key} still holds ${holds!.version}, not ${want.version}: ${REPAIR}`);
    } else found.problems.push(`${problem}; ${REPAIR}`);
  }
}

/**
 * The public site (docs/site.md): the public feeds are the canonical ones
 * (or an older state of them, after an interrupted publish), and every file
 * they name, and the stable latest downloads, is there.
 */
export async function checkSite(store: ObjectStore, pluginId: string, records: readonly ReleaseRecord[], tally: HashTally = { objects: 0, bytes: 0 }): Promise<SiteFindings> {
  const found: SiteFindings = { problems: [], warnings: [] };
  const [publicCatalog, publicAppcast, index] = await Promise.all([store.get(publicCatalogKey(pluginId)), store.get(publicAppcastKey(pluginId)), store.head(INDEX_KEY)]);
  if (!publicCatalog && !publicAppcast && !index) {
    if (records.length > 0) found.warnings.push(`the store has no public site (written by relcast before 0.2); run \`relcast site sync\``);
    return found;
  }
  for (const [key, object, canonicalKey] of [[publicCatalogKey(pluginId), publicCatalog, CATALOG_KEY], [publicAppcastKey(pluginId), publicAppcast, APPCAST_KEY]] as const) {
    if (!object) {
      found.problems.push(`${key} is missing; ${REPAIR}`);
      continue;
    }
    if (key.endsWith(".xml")) {
      const strict = strictXmlProblem(object.body.toString("utf8"), key);
      if (strict) found.problems.push(strict);
    }
    const canonical = await store.get(canonicalKey);
    if (canonical && !canonical.body.equals(object.body)) found.warnings.push(`${key} differs from ${canonicalKey}: ${REPAIR}`);
  }
  let listed = records;
  if (publicCatalog) {
    try {
      listed = parseCatalog(publicCatalog.body.toString("utf8"), store.uriFor(publicCatalogKey(pluginId))).versions;
    } catch (err) {
      found.problems.push((err as Error).message);
    }
  }
  found.problems.push(...(await downloadProblems(store, listed, tally)));
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
    await latestDownloadFindings(store, pluginId, want, holdsRecord, tally, found);
    if (holds !== want.version && found.problems.length === 0) found.warnings.push(`the stable latest downloads state says ${holds ?? "an unknown version"}, not ${want.version}: ${REPAIR}`);
  }
  return found;
}
