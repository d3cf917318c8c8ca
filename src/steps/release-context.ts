import type { RelcastConfig } from "../config/schema.js";
import type { Logger } from "../core/logger.js";
import type { BundleInfo } from "../bundle/info-plist.js";
import type { ObjectStore } from "../store/object-store.js";
import type { SigningKey } from "../sparkle/signing-key.js";
import type { StreamingSignature } from "../sparkle/ed25519-stream.js";
import type { AutoupdateFlags, AutoupdateOptions } from "../domain/autoupdate-options.js";
import type { ReleaseNotes } from "../domain/release-notes.js";
import type { LocalizedNotes } from "./preflight/localized-notes.js";
import type { CatalogView } from "../catalog/catalog-entry.js";
import type { FeedSigning } from "../catalog/feed-signing.js";
import type { ReleaseRecord } from "../domain/record-schema.js";
import type { LocalArtifact } from "../domain/build-record.js";
import type { ReleasePlan } from "../domain/release-plan.js";
import type { ContentHashLookup } from "../sparkle/delta/zip-bundle-tree.js";

export interface ReleaseInputs {
  version: string;
  appDir: string;
  dmgFile: string;
  /** Release notes in Markdown (`--notes`), or the version's section of a Keep a Changelog file (`--changelog`). */
  notesFile?: string | undefined;
  changelogFile?: string | undefined;
  /** `--localized-notes <lang>=<file>`, as given. */
  localizedNotes?: readonly string[] | undefined;
  summary?: string | undefined;
  buildNumber?: number | undefined;
  /** Fixed publication time (migration, reproducible tests); default now. */
  publishedAt?: Date | undefined;
  /** Per-release Sparkle flags (--critical, --phased-rollout-interval, ...). */
  autoupdate?: AutoupdateFlags | undefined;
  /** `--no-deltas`: make no Sparkle delta updates for this release. */
  noDeltas?: boolean | undefined;
  /** `--allow-key-change`: publish although the previous release's bundle carries another SUPublicEDKey. */
  allowKeyChange?: boolean | undefined;
  dryRun: boolean;
}

/** A Sparkle delta update made on this machine, ready to upload. */
export interface DeltaArtifact extends LocalArtifact {
  fromVersion: string;
  fromBuild: number;
  fileName: string;
  edSignature: string;
}

/**
 * The one object every step reads and writes. Steps fill the optional
 * fields in pipeline order; a step that needs a field a previous step
 * should have set calls `need()`.
 */
export interface ReleaseContext {
  config: RelcastConfig;
  inputs: ReleaseInputs;
  logger: Logger;
  /** Called after each step that ran, with the context as that step left it (the CLI decides from it what to print). */
  afterStep?: ((step: string, ctx: ReleaseContext) => void | Promise<void>) | undefined;
  store: ObjectStore;
  key: SigningKey;
  /** Temp folder for the zip; removed by the pipeline. */
  workDir: string;
  /** Aborted when the run stops on an error: work still going on in the background (the disk image's hash) gives up. */
  stopping: AbortSignal;
  bundle?: BundleInfo;
  /** The bundle's icon as a PNG in the work folder (preflight), when it has one. */
  icon?: (LocalArtifact & { width: number; height: number }) | undefined;
  /** `sparkle:hardwareRequirements` from the main executable's Mach-O slices (preflight), when it needs Apple silicon. */
  hardwareRequirements?: string | undefined;
  /** The bundle's SUPublicEDKey differs from the previous release's and --allow-key-change was given (preflight). */
  keyChangeAllowed?: boolean | undefined;
  notes?: ReleaseNotes;
  /** The `--localized-notes`, read and checked (preflight), sorted by language. */
  localizedNotes?: LocalizedNotes[];
  buildNumber?: number;
  /** Sparkle options resolved from flags and config, stored in the record. */
  autoupdateOptions?: AutoupdateOptions;
  /** The disk image copied into the work folder and hashed (started by preflight, running while the bundle is zipped). */
  dmgSnapshot?: Promise<LocalArtifact>;
  /**
   * The zip (zip step), with the SHA-1 of each file's and link's bytes as
   * zipped, by entry name: the deltas step builds this release's tree from
   * them instead of inflating and hashing the zip again.
   */
  zip?: LocalArtifact & { contentHashes?: ContentHashLookup };
  /** The zip's signature with its first pass already fed by the zip writer; the sign step finishes it. */
  zipSignature?: StreamingSignature;
  edSignature?: string;
  /** This release's tree manifest (the deltas step), stored beside the record so later deltas need not read its zip. */
  treeManifest?: LocalArtifact | undefined;
  /** Delta updates from older releases (the deltas step); empty when none were kept. */
  deltas?: DeltaArtifact[];
  /** The key and the bundle's demand for a signed appcast (set by preflight; the feeds are planned with it). */
  feedSigning?: FeedSigning;
  /** The catalog as preflight found it (undefined for a new store). */
  catalog?: CatalogView | undefined;
  /** The record already in the store for this version, if any. */
  existingRecord?: ReleaseRecord;
  record?: ReleaseRecord;
  plan?: ReleasePlan;
  /** Keys written by this run, in order. */
  written: string[];
  /** ETags the apply steps' writes returned, by key. */
  etags: Map<string, string>;
  /** The ETags of catalog and appcast as the feeds step left them (the site is checked against these). */
  feedsLeft?: { catalogEtag: string | undefined; appcastEtag: string | undefined };
}

export function need<T>(value: T | undefined, what: string): T {
  if (value === undefined) throw new Error(`pipeline bug: ${what} is not set yet`);
  return value;
}
