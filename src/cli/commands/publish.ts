import { Command } from "commander";
import { RelcastError } from "../../core/errors.js";
import { parseIsoTimestamp } from "../../core/iso-timestamp.js";
import { publish, type PublishStepEvent } from "../../api/publish.js";
import { formatPlan } from "../../domain/release-plan.js";
import { feedDiffs } from "../../release/plan-preview.js";
import { cliLogger } from "../cli-logger.js";
import { uploadProgressReporter } from "../upload-progress.js";
import { reportPublished } from "../publish-report.js";
import { heldLogger } from "../held-logger.js";

interface PublishFlags {
  version: string;
  /** false with --no-deltas */
  deltas?: boolean;
  app: string;
  dmg: string;
  notes?: string;
  changelog?: string;
  summary?: string;
  buildNumber?: string;
  config?: string;
  store?: string;
  channel?: string;
  allowKeyChange?: boolean;
  keyFile?: string;
  critical?: true | string;
  minimumAutoupdateVersion?: string;
  phasedRolloutInterval?: string;
  releaseNotesUrl?: string;
  fullReleaseNotesUrl?: string;
  minimumUpdateVersion?: string;
  informationalUpdateVersions?: string;
  informational?: boolean;
  link?: string;
  ignoreSkippedUpgradesBelowVersion?: string;
  maximumSystemVersion?: string;
  localizedNotes?: string[];
  publishedAt?: string;
  dryRun?: boolean;
  json?: boolean;
  quiet?: boolean;
}

function parseBuildNumber(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  if (!/^\d{1,15}$/.test(text)) throw new RelcastError("E_USAGE", `--build-number "${text}" is not a non-negative integer`, "pass the integer CFBundleVersion, e.g. --build-number 42");
  return Number(text);
}

function parsePublishedAt(text: string | undefined): Date | undefined {
  if (text === undefined) return undefined;
  const parsed = parseIsoTimestamp(text);
  if (!parsed.ok) throw new RelcastError("E_USAGE", `--published-at ${JSON.stringify(text.slice(0, 80))} ${parsed.reason}`, "use a real date and time in UTC, e.g. 2026-01-31T12:00:00.000Z");
  return parsed.date;
}

function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

export function registerPublish(program: Command): void {
  program
    .command("publish")
    .description("zip, sign and publish one release; then update catalog and appcast")
    .requiredOption("--version <semver>", "release version (a leading v is stripped)")
    .requiredOption("--app <dir>", "built plugin bundle folder (holds Contents/Info.plist)")
    .requiredOption("--dmg <file>", "disk image to publish")
    .option("--notes <file>", "release notes in Markdown (list items become the record's notes)")
    .option("--localized-notes <lang=file>", "release notes in another language, Markdown (repeatable: --localized-notes de=notes.de.md)", collect, [])
    .option("--changelog <file>", "take the notes from this version's section of a Keep a Changelog file (CHANGELOG.md)")
    .option("--summary <text>", "one-line summary (default: the first note)")
    .option("--build-number <n>", "build number when CFBundleVersion is not an integer")
    .option("--config <file>", "config file", "relcast.config.json")
    .option("--store <url>", "file:///abs, file://./rel or s3://bucket[/prefix] (overrides config)")
    .option("--channel <name>", "release channel (overrides config)")
    .option("--key-file <file>", "base64 Ed25519 key (else $RELCAST_SIGNING_KEY)")
    .option("--critical [build]", "mark the update critical (for installs below <build> only, when given)")
    .option("--minimum-autoupdate-version <build>", "installs below this build are not updated automatically (major upgrade)")
    .option("--phased-rollout-interval <seconds>", "Sparkle phased rollout: seconds between groups (0: none; default from config)")
    .option("--release-notes-url <url>", "sparkle:releaseNotesLink instead of inline notes ({version} is filled in)")
    .option("--full-release-notes-url <url>", "sparkle:fullReleaseNotesLink (the full version history)")
    .option("--published-at <iso>", "publication time in UTC instead of now, e.g. 2026-01-31T12:00:00.000Z (importing releases published elsewhere, reproducible runs)")
    .option("--minimum-update-version <build>", "offer this update only to installs at or above this build")
    .option("--informational-update-versions <builds>", "informational only (no install) for these builds; <build means below it, e.g. 100,<90 (needs --link)")
    .option("--informational", "informational only for every install (needs --link)")
    .option("--link <url>", "the item's <link>: the page \"Learn More…\" opens ({version} is filled in; default appcast.link)")
    .option("--ignore-skipped-upgrades-below-version <build>", "with --minimum-autoupdate-version: offer this major upgrade again to users who skipped one whose build is below this")
    .option("--maximum-system-version <version>", "do not offer the update on a macOS newer than this (e.g. 15.9)")
    .option("--allow-key-change", "publish although the previous release's bundle carries another SUPublicEDKey (see docs/sparkle.md: key rotation)")
    .option("--no-deltas", "make no Sparkle delta updates from older releases (as deltas.maximum: 0)")
    .option("--dry-run", "print the plan and the diff of appcast and catalog; write nothing")
    .option("--json", "print the record as JSON on stdout (dry run: record, plan and the new contents)")
    .option("-q, --quiet", "only errors on stderr")
    .action(async (flags: PublishFlags, command: Command) => {
      const debug = Boolean(command.optsWithGlobals().debug);
      const logger = cliLogger({ quiet: Boolean(flags.quiet), debug });
      // A version already in the store: its checks are held until the plan shows whether the run has anything to do,
      // so an identical re-run prints one line. Everything else prints as it happens (a dry run always does).
      const held = heldLogger(logger);
      if (flags.dryRun) await held.release();
      const onStep = async (e: PublishStepEvent) => {
        if (e.step === "preflight" && !e.alreadyPublished) await held.release();
        if (e.step === "plan") {
          if (e.nothingToDo) held.discard();
          else await held.release();
        }
      };
      const result = await publish({
        version: flags.version, app: flags.app, dmg: flags.dmg, notes: flags.notes, localizedNotes: flags.localizedNotes, changelog: flags.changelog, summary: flags.summary,
        buildNumber: parseBuildNumber(flags.buildNumber), publishedAt: parsePublishedAt(flags.publishedAt),
        config: flags.config, store: flags.store, channel: flags.channel, keyFile: flags.keyFile, dryRun: Boolean(flags.dryRun),
        noDeltas: flags.deltas === false, allowKeyChange: Boolean(flags.allowKeyChange),
        autoupdate: {
          critical: flags.critical, minimumAutoupdateVersion: flags.minimumAutoupdateVersion, phasedRolloutInterval: flags.phasedRolloutInterval,
          releaseNotesUrl: flags.releaseNotesUrl, fullReleaseNotesUrl: flags.fullReleaseNotesUrl,
          minimumUpdateVersion: flags.minimumUpdateVersion, informationalUpdateVersions: flags.informationalUpdateVersions,
          informational: flags.informational, link: flags.link,
          ignoreSkippedUpgradesBelowVersion: flags.ignoreSkippedUpgradesBelowVersion, maximumSystemVersion: flags.maximumSystemVersion,
        },
        logger: held, onStep,
        onProgress: uploadProgressReporter({ tty: Boolean(process.stderr.isTTY) && !flags.json, quiet: Boolean(flags.quiet) }),
      }).catch(async (err: unknown) => {
        await held.release();
        throw err;
      });
      if (flags.dryRun) process.stderr.write(`${formatPlan(result.plan)}\n${feedDiffs(result.preview!)}`);
      reportPublished(result, { json: Boolean(flags.json), quiet: Boolean(flags.quiet) });
    });
}
