import { loadConfig } from "../config/load-config.js";
import { RelcastError } from "../core/errors.js";
import { silentLogger, type Logger } from "../core/logger.js";
import { runRelease } from "../release/pipeline.js";
import { previewPlan, type PlanPreview } from "../release/plan-preview.js";
import type { AutoupdateFlags } from "../domain/autoupdate-options.js";
import type { ReleaseRecord } from "../domain/record-schema.js";
import type { ReleaseContext } from "../steps/release-context.js";
import type { ReleasePlan } from "../domain/release-plan.js";
import { normalizeVersion, requireChannelForPrerelease } from "../domain/version-input.js";
import { checkNotesSource } from "../steps/preflight/notes-file.js";
import { parseLocalizedNotesArgs } from "../steps/preflight/localized-notes.js";
import { loadSigningKey, parseSigningKey } from "../sparkle/signing-key.js";
import { openStore, type StoreSettings } from "../store/open-store.js";

export interface PublishOptions {
  /** Release version; a leading "v" is stripped, so a tag name works. */
  version: string;
  /** The built plugin bundle folder (holds Contents/Info.plist). */
  app: string;
  /** The disk image to publish. */
  dmg: string;
  /** Release notes file (Markdown); or `changelog`. */
  notes?: string | undefined;
  /** A Keep a Changelog file (CHANGELOG.md): the notes are the version's section. */
  changelog?: string | undefined;
  /** `<lang>=<file>` per language besides the default (English) notes, e.g. "de=notes.de.md". */
  localizedNotes?: readonly string[] | undefined;
  /** One-line summary; default: the first note. */
  summary?: string | undefined;
  buildNumber?: number | undefined;
  /** Config file; default `relcast.config.json` in the working directory. */
  config?: string | undefined;
  /** Store URL (`file:///abs`, `file://./rel`, `s3://bucket/prefix`); overrides the config. Relative folders resolve against the working directory. */
  store?: string | undefined;
  channel?: string | undefined;
  /** The base64 signing key itself; else `keyFile`; else `$RELCAST_SIGNING_KEY`. */
  key?: string | undefined;
  keyFile?: string | undefined;
  autoupdate?: AutoupdateFlags | undefined;
  /** Publish although the previous release's bundle carries another SUPublicEDKey (a deliberate key rotation). */
  allowKeyChange?: boolean | undefined;
  publishedAt?: Date | undefined;
  /** Make no Sparkle delta updates (as `deltas.maximum: 0`). */
  noDeltas?: boolean | undefined;
  /** Run every check and compute the plan; write nothing. */
  dryRun?: boolean | undefined;
  /** Progress lines; default silent. */
  logger?: Logger | undefined;
  onProgress?: StoreSettings["onProgress"];
  /**
   * After each pipeline step: whether this version already has a record in
   * the store (known after preflight) and whether the run has nothing to do
   * (known after plan: an identical re-run).
   */
  onStep?: ((event: PublishStepEvent) => void | Promise<void>) | undefined;
}

export interface PublishStepEvent {
  step: string;
  alreadyPublished: boolean;
  /** Undefined until the plan exists. */
  nothingToDo: boolean | undefined;
}

export interface PublishResult {
  record: ReleaseRecord;
  plan: ReleasePlan;
  /** "new", "resume" (an interrupted publish finished) or "noop" (already published). */
  mode: ReleasePlan["mode"];
  dryRun: boolean;
  /** The public appcast URL, the value for SUFeedURL. */
  appcastUrl: string;
  downloadUrl: string;
  /** Where the store keeps the appcast (file:// or s3:// URI). */
  storeAppcastUri: string;
  storeCatalogUri: string;
  /** Dry run only: the new contents of the catalog, appcast and pages, and the store's current feeds. */
  preview?: PlanPreview | undefined;
}

/**
 * One release, exactly as `relcast publish` does it: every check first, then
 * the writes (none with `dryRun`). Errors are `RelcastError`s with a `code`.
 */
export async function publish(options: PublishOptions): Promise<PublishResult> {
  checkNotesSource({ notesFile: options.notes, changelogFile: options.changelog });
  parseLocalizedNotesArgs(options.localizedNotes ?? []);
  if (options.publishedAt !== undefined && !(options.publishedAt instanceof Date && Number.isFinite(options.publishedAt.getTime()))) {
    throw new RelcastError("E_USAGE", "publishedAt is not a valid Date", "pass a Date that holds a time, e.g. new Date(\"2026-01-31T12:00:00.000Z\")");
  }
  const version = normalizeVersion(options.version);
  const key = options.key !== undefined ? parseSigningKey(options.key, "the key option") : await loadSigningKey(options.keyFile);
  const config = await loadConfig(options.config, { store: options.store, channel: options.channel });
  requireChannelForPrerelease(version, config.channel, options.channel);
  const logger = options.logger ?? silentLogger;
  const store = await openStore(config.store, options.store ? process.cwd() : config.baseDir, { onProgress: options.onProgress, onWarning: (m) => logger.warn(m), s3: config.s3 });
  let ctx: ReleaseContext;
  let preview: PlanPreview | undefined;
  try {
    ctx = await runRelease({
      config, store, key, logger,
      afterStep: options.onStep && ((step, c) => options.onStep!({
        step, alreadyPublished: c.existingRecord !== undefined,
        nothingToDo: c.plan && c.plan.mode === "noop" && c.plan.writes.every((w) => !w.needed),
      })),
      inputs: {
        version, appDir: options.app, dmgFile: options.dmg, notesFile: options.notes, changelogFile: options.changelog, localizedNotes: options.localizedNotes, summary: options.summary,
        buildNumber: options.buildNumber, publishedAt: options.publishedAt, dryRun: Boolean(options.dryRun),
        autoupdate: options.autoupdate, noDeltas: options.noDeltas, allowKeyChange: options.allowKeyChange,
      },
    }, options.dryRun ? async (planned) => void (preview = await previewPlan(store, planned.plan!)) : undefined);
  } finally {
    await store.close?.();
  }
  const record = ctx.record!;
  const plan = ctx.plan!;
  return {
    record, plan, mode: plan.mode, dryRun: Boolean(options.dryRun),
    appcastUrl: record.publicAppcastUrl, downloadUrl: record.publicDownloadUrl,
    storeAppcastUri: store.uriFor("releases/appcast.xml"), storeCatalogUri: store.uriFor("releases/catalog.json"), preview,
  };
}
