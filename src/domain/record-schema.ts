import { z } from "zod";
import { CHANNEL_PATTERN, isHttpUrl, isPluginId, isReleaseVersion, isSafeFileName } from "./record-fields.js";
import { xmlTextProblem } from "../core/xml-text.js";
import { parseIsoTimestamp } from "../core/iso-timestamp.js";
import { PNG_MAX_SIDE } from "../core/png-image.js";
import { iconFileName } from "./release-layout.js";
import { DEFAULT_NOTES_LANGUAGE, isNotesLanguage } from "./notes/notes-language.js";
import { rolloutBoundIssues } from "./rollout-bounds.js";
import { localizedNotesPageKey, publicAppcastUrl } from "./release-layout.js";

/**
 * The release record (`releases/<version>/release.json`). Records written by relcast always carry every
 * field; the oldest records in a migrated store may lack the optional ones,
 * and fields we do not know are kept (loose objects) so a rebuild never
 * drops data.
 */
export const timestampSchema = z.strictObject({
  // The seconds a JavaScript Date can hold (±8.64e12): outside them every date derived from the record is invalid.
  _seconds: z.number().int().min(-8_640_000_000_000).max(8_640_000_000_000),
  _nanoseconds: z.number().int().min(0).max(999_999_999),
});

/** An ISO 8601 timestamp as relcast writes it; a day the month does not have is refused, never rolled over. */
const isoTimestamp = z.string().superRefine((value, ctx) => {
  const parsed = parseIsoTimestamp(value);
  if (!parsed.ok) ctx.addIssue({ code: "custom", message: `${JSON.stringify(value.slice(0, 80))} ${parsed.reason}` });
});
const httpUrl = z.string().refine(isHttpUrl, "must be an absolute http(s) URL");
const releaseVersion = z.string().refine(isReleaseVersion, "must be a semantic version <major>.<minor>.<patch>[-prerelease] without build metadata");
const pluginId = z.string().refine(isPluginId, "must be a plugin id (lower-case letters, digits, '.', '_', '-'; at most 64)");
const fileName = z.string().refine(isSafeFileName, "must be a plain file name (letters, digits, '.', '_', '-'; no folders)");

/**
 * Every string anywhere in a record (known fields and kept unknown ones)
 * must be text XML 1.0 can hold: a record someone edited by hand can never
 * make the appcast or the pages unparsable.
 */
function checkXmlText(value: unknown, path: PropertyKey[], ctx: z.RefinementCtx): void {
  if (typeof value === "string") {
    const problem = xmlTextProblem(value);
    if (problem) ctx.addIssue({ code: "custom", path, message: `has a character feeds cannot hold (${problem})` });
  } else if (Array.isArray(value)) value.forEach((v, i) => checkXmlText(v, [...path, i], ctx));
  else if (value && typeof value === "object") for (const [k, v] of Object.entries(value)) checkXmlText(v, [...path, k], ctx);
}

/** One Sparkle delta update of a release (relcast extra): from which release, where, and how to check it. */
export const deltaRecordSchema = z.strictObject({
  fromVersion: releaseVersion,
  fromBuild: z.number().int().nonnegative(),
  url: httpUrl,
  sizeBytes: z.number().int().nonnegative(),
  sha256: z.string().regex(/^[0-9a-f]{64}$/),
  edSignature: z.string(),
});

export type DeltaRecord = z.infer<typeof deltaRecordSchema>;

const notesLanguage = z.string().refine(isNotesLanguage, "must be a language tag in canonical form, e.g. de, pt-BR, zh-Hant");
const buildNumberText = z.string().regex(/^\d{1,15}$/, "must be a build number");
const macosVersion = z.string().regex(/^\d{1,4}(\.\d{1,4}){0,2}$/, "must be a macOS version such as 14.0");

/** One language's notes besides the default (`--localized-notes <lang>=<file>`): the Markdown as written. */
export const localizedNotesSchema = z.strictObject({ lang: notesLanguage, markdown: z.string() });
/** The `<sparkle:releaseNotesLink xml:lang>` of one language (page mode: the page relcast hosts). */
export const localizedLinkSchema = z.strictObject({ lang: notesLanguage, url: httpUrl });

/** Publish takes each language once and never `en` (the default notes are the English ones); a record must not hold more. */
function byLanguage<T extends z.ZodType<{ lang: string }>>(item: T) {
  return z.array(item).superRefine((list, ctx) => {
    const seen = new Set<string>();
    list.forEach((entry, i) => {
      if (entry.lang === DEFAULT_NOTES_LANGUAGE) ctx.addIssue({ code: "custom", path: [i, "lang"], message: `is ${DEFAULT_NOTES_LANGUAGE}: the default notes are the ${DEFAULT_NOTES_LANGUAGE} ones` });
      else if (seen.has(entry.lang)) ctx.addIssue({ code: "custom", path: [i, "lang"], message: `names ${entry.lang} a second time` });
      seen.add(entry.lang);
    });
  });
}

export const autoupdateSchema = z.looseObject({
  publicDownloadUrl: httpUrl,
  buildNumber: z.number().int().nonnegative(),
  edSignature: z.string(),
  sizeBytes: z.number().int().nonnegative(),
  /** relcast extras: hex SHA-256 of the zip and the bundle's LSMinimumSystemVersion. */
  sha256: z.string().optional(),
  minimumSystemVersion: z.string().optional(),
  /** relcast writes `arm64` when the main executable has only Apple-silicon slices (generate_appcast's rule). */
  hardwareRequirements: z.string().optional(),
  /** relcast extra: published with --allow-key-change (its bundle's SUPublicEDKey differs from the release before it). */
  keyChangeAllowed: z.literal(true).optional(),
  /**
   * Per-release Sparkle options, frozen at publish time so `relcast rebuild`
   * writes the same appcast. `criticalUpdate.version`: critical only for
   * installs whose build is below it (Sparkle's `sparkle:version` attribute).
   */
  criticalUpdate: z.strictObject({ version: z.string().optional() }).optional(),
  minimumAutoupdateVersion: z.string().optional(),
  phasedRolloutInterval: z.number().int().positive().optional(),
  releaseNotesLink: httpUrl.optional(),
  fullReleaseNotesLink: httpUrl.optional(),
  /** `<sparkle:minimumUpdateVersion>`: offered only to installs at or above this build. */
  minimumUpdateVersion: buildNumberText.optional(),
  /** `<sparkle:ignoreSkippedUpgradesBelowVersion>`: on a major upgrade, offered again to users who skipped a major upgrade whose build is below this. */
  ignoreSkippedUpgradesBelowVersion: buildNumberText.optional(),
  /** `<sparkle:maximumSystemVersion>`: not offered on a newer macOS. */
  maximumSystemVersion: macosVersion.optional(),
  /**
   * `<sparkle:informationalUpdate>` in generate_appcast's syntax: "110" is a `<sparkle:version>` (exactly that
   * build), "<110" a `<sparkle:belowVersion>`; `[]` (the empty element) is informational for everyone.
   */
  informationalUpdate: z.array(z.string().regex(/^<?\d{1,15}$/, "must be a build or <build")).optional(),
  /** The item's `<link>`: the page Sparkle opens for an informational update ("Learn More…"). */
  link: httpUrl.optional(),
  /** `<sparkle:releaseNotesLink xml:lang>` per language, after the default link (page mode). */
  localizedReleaseNotesLinks: byLanguage(localizedLinkSchema).optional(),
  /** Sparkle delta updates to this release, highest from-build first (the appcast's <sparkle:deltas>). */
  deltas: z.array(deltaRecordSchema).optional(),
});

/**
 * relcast extra: the bundle's icon (the largest PNG of its CFBundleIconFile),
 * stored as `releases/<version>/<fileName>` and copied to `icons/<fileName>`
 * for the downloads page. Absent: the bundle has none, or an older relcast
 * published the release.
 */
export const iconRecordSchema = z.strictObject({
  fileName,
  sizeBytes: z.number().int().positive(),
  sha256: z.string().regex(/^[0-9a-f]{64}$/),
  width: z.number().int().min(1).max(PNG_MAX_SIDE),
  height: z.number().int().min(1).max(PNG_MAX_SIDE),
});

export type IconRecord = z.infer<typeof iconRecordSchema>;

export const releaseRecordSchema = z.looseObject({
  pluginId,
  displayName: z.string(),
  publisher: z.string(),
  version: releaseVersion,
  semver: z.string(),
  channel: z.string().regex(CHANNEL_PATTERN, "may hold only letters, digits, '.', '_' and '-'"),
  artifactType: z.string(),
  summary: z.string(),
  releaseNotes: z.string(),
  releaseNotesList: z.array(z.string()),
  /** relcast extra: the notes as written (CommonMark); the appcast and the pages render it. Absent in older records. */
  releaseNotesMarkdown: z.string().optional(),
  /** relcast extra: notes in other languages (`--localized-notes`); the default language's are the fields above. */
  localizedReleaseNotes: byLanguage(localizedNotesSchema).optional(),
  sizeBytes: z.number().int().nonnegative(),
  /** relcast extra: hex SHA-256 of the disk image. */
  sha256: z.string().optional(),
  downloadUrl: z.string(),
  publicDownloadUrl: httpUrl,
  publicLatestDownloadUrl: httpUrl,
  appcastUrl: z.string(),
  publicAppcastUrl: httpUrl,
  /** Keys are checked against the version and file name: a record can only name its own `releases/<version>/<file>`. */
  objectStore: z.looseObject({
    bucket: z.string(),
    objectPath: z.string(),
    artifactFileName: fileName,
    latestObjectPath: z.string(),
  }),
  autoupdate: autoupdateSchema.optional(),
  icon: iconRecordSchema.optional(),
  assistantIntegration: z.array(z.string()).optional(),
  publishedAt: timestampSchema,
  publishedAtIso: isoTimestamp.optional(),
  publishedAtLocal: z.string().optional(),
  publishedAtTimezone: z.string().optional(),
  updatedAt: timestampSchema,
  /** Set in the catalog (never in release.json) while a release is yanked; see releases/<v>/yank.json. */
  yanked: z.literal(true).optional(),
  yankedReason: z.string().optional(),
  yankedAt: isoTimestamp.optional(),
  /** Set in the catalog (never in release.json) once a phased rollout was paused; see releases/<v>/rollout.json. */
  rollout: z.lazy(() => rolloutMarkerSchema).optional(),
}).superRefine((record, ctx) => {
  const { version, objectStore } = record;
  if (typeof objectStore !== "object" || objectStore === null) return;
  if (objectStore.objectPath !== `releases/${version}/${objectStore.artifactFileName}`) {
    ctx.addIssue({ code: "custom", path: ["objectStore", "objectPath"], message: `must be releases/<version>/<artifactFileName> (releases/${version}/${objectStore.artifactFileName})` });
  }
  const latestName = objectStore.latestObjectPath.startsWith("releases/latest/") ? objectStore.latestObjectPath.slice("releases/latest/".length) : "";
  if (!isSafeFileName(latestName)) {
    ctx.addIssue({ code: "custom", path: ["objectStore", "latestObjectPath"], message: "must be releases/latest/<file name>" });
  }
  if (record.icon && record.icon.fileName !== iconFileName(record.pluginId, version)) {
    ctx.addIssue({ code: "custom", path: ["icon", "fileName"], message: `must be ${iconFileName(record.pluginId, version)}` });
  }
  // relcast links a language only to the page it hosts for it (signed on a signed feed); any other link is an edit.
  const appcastSuffix = publicAppcastUrl("", record.pluginId);
  if (typeof record.publicAppcastUrl === "string" && record.publicAppcastUrl.endsWith(appcastSuffix)) {
    const appUrl = record.publicAppcastUrl.slice(0, -appcastSuffix.length);
    record.autoupdate?.localizedReleaseNotesLinks?.forEach((l, i) => {
      const want = `${appUrl}/${localizedNotesPageKey(version, l.lang)}`;
      if (l.url !== want) ctx.addIssue({ code: "custom", path: ["autoupdate", "localizedReleaseNotesLinks", i, "url"], message: `must be the page relcast hosts for ${l.lang} (${want})` });
    });
  }
  if (record.rollout && typeof record.publishedAt === "object" && record.publishedAt !== null) {
    for (const issue of rolloutBoundIssues(record.publishedAt._seconds * 1000, record.rollout)) ctx.addIssue({ code: "custom", path: ["rollout", "pauses", issue.index], message: issue.message });
  }
  checkXmlText(record, [], ctx);
});

/** `releases/<v>/yank.json`: the yank state the catalog entry carries. */
export const yankMarkerSchema = z.strictObject({
  yanked: z.literal(true),
  yankedAt: isoTimestamp,
  yankedReason: z.string().optional(),
}).superRefine((marker, ctx) => checkXmlText(marker, [], ctx));

export type YankMarker = z.infer<typeof yankMarkerSchema>;

/** A time in whole seconds: the appcast's pubDate has none smaller, so pause sums stay exact. */
const wholeSecond = isoTimestamp.refine((v) => Date.parse(v) % 1000 === 0, "must be a whole second (no fraction)");

/**
 * `releases/<v>/rollout.json`: every pause of a phased rollout, oldest
 * first; the last one is open (no `resumedAt`) exactly while `paused`.
 */
export const rolloutMarkerSchema = z.strictObject({
  paused: z.boolean(),
  pauses: z.array(z.strictObject({ pausedAt: wholeSecond, resumedAt: wholeSecond.optional() })).min(1).max(10_000),
}).superRefine((marker, ctx) => {
  let previousEnd = -Infinity;
  marker.pauses.forEach((p, i) => {
    const last = i === marker.pauses.length - 1;
    const from = Date.parse(p.pausedAt);
    const to = p.resumedAt === undefined ? undefined : Date.parse(p.resumedAt);
    if (to === undefined && !(last && marker.paused)) ctx.addIssue({ code: "custom", path: ["pauses", i, "resumedAt"], message: "is missing: only the last pause of a paused rollout is open" });
    if (to !== undefined && last && marker.paused) ctx.addIssue({ code: "custom", path: ["pauses", i, "resumedAt"], message: "is set, but the rollout says paused" });
    if (from < previousEnd) ctx.addIssue({ code: "custom", path: ["pauses", i, "pausedAt"], message: "is before the previous pause ended" });
    if (to !== undefined && to < from) ctx.addIssue({ code: "custom", path: ["pauses", i, "resumedAt"], message: "is before its pausedAt" });
    previousEnd = to ?? from;
  });
});

export type RolloutMarker = z.infer<typeof rolloutMarkerSchema>;

export type ReleaseRecord = z.infer<typeof releaseRecordSchema>;

export const catalogSchema = z.looseObject({
  pluginId,
  count: z.number().int().nonnegative(),
  versions: z.array(releaseRecordSchema),
});

export type Catalog = z.infer<typeof catalogSchema>;
