import { z } from "zod";

/**
 * The §2.6 release record. Records written by relcast always carry every
 * field; the oldest records in a migrated store may lack the optional ones,
 * and fields we do not know are kept (loose objects) so a rebuild never
 * drops data.
 */
export const timestampSchema = z.strictObject({
  _seconds: z.number().int(),
  _nanoseconds: z.number().int().min(0).max(999_999_999),
});

/** One Sparkle delta update of a release (relcast extra): from which release, where, and how to check it. */
export const deltaRecordSchema = z.strictObject({
  fromVersion: z.string(),
  fromBuild: z.number().int().nonnegative(),
  url: z.string(),
  sizeBytes: z.number().int().nonnegative(),
  sha256: z.string().regex(/^[0-9a-f]{64}$/),
  edSignature: z.string(),
});

export type DeltaRecord = z.infer<typeof deltaRecordSchema>;

export const autoupdateSchema = z.looseObject({
  publicDownloadUrl: z.string(),
  buildNumber: z.number().int().nonnegative(),
  edSignature: z.string(),
  sizeBytes: z.number().int().nonnegative(),
  /** relcast extras: hex SHA-256 of the zip and the bundle's LSMinimumSystemVersion. */
  sha256: z.string().optional(),
  minimumSystemVersion: z.string().optional(),
  /**
   * Per-release Sparkle options, frozen at publish time so `relcast rebuild`
   * writes the same appcast. `criticalUpdate.version`: critical only for
   * installs whose build is below it (Sparkle's `sparkle:version` attribute).
   */
  criticalUpdate: z.strictObject({ version: z.string().optional() }).optional(),
  minimumAutoupdateVersion: z.string().optional(),
  phasedRolloutInterval: z.number().int().positive().optional(),
  releaseNotesLink: z.string().optional(),
  fullReleaseNotesLink: z.string().optional(),
  /** Sparkle delta updates to this release, highest from-build first (the appcast's <sparkle:deltas>). */
  deltas: z.array(deltaRecordSchema).optional(),
});

export const releaseRecordSchema = z.looseObject({
  pluginId: z.string(),
  displayName: z.string(),
  publisher: z.string(),
  version: z.string(),
  semver: z.string(),
  channel: z.string(),
  artifactType: z.string(),
  summary: z.string(),
  releaseNotes: z.string(),
  releaseNotesList: z.array(z.string()),
  /** relcast extra: the notes as written (CommonMark); the appcast and the pages render it. Absent in older records. */
  releaseNotesMarkdown: z.string().optional(),
  sizeBytes: z.number().int().nonnegative(),
  /** relcast extra: hex SHA-256 of the disk image. */
  sha256: z.string().optional(),
  downloadUrl: z.string(),
  publicDownloadUrl: z.string(),
  publicLatestDownloadUrl: z.string(),
  appcastUrl: z.string(),
  publicAppcastUrl: z.string(),
  objectStore: z.looseObject({
    bucket: z.string(),
    objectPath: z.string(),
    artifactFileName: z.string(),
    latestObjectPath: z.string(),
  }),
  autoupdate: autoupdateSchema.optional(),
  assistantIntegration: z.array(z.string()).optional(),
  publishedAt: timestampSchema,
  publishedAtIso: z.string().optional(),
  publishedAtLocal: z.string().optional(),
  publishedAtTimezone: z.string().optional(),
  updatedAt: timestampSchema,
  /** Set in the catalog (never in release.json) while a release is yanked; see releases/<v>/yank.json. */
  yanked: z.literal(true).optional(),
  yankedReason: z.string().optional(),
  yankedAt: z.string().optional(),
});

/** `releases/<v>/yank.json`: the yank state the catalog entry carries. */
export const yankMarkerSchema = z.strictObject({
  yanked: z.literal(true),
  yankedAt: z.string(),
  yankedReason: z.string().optional(),
});

export type YankMarker = z.infer<typeof yankMarkerSchema>;

export type ReleaseRecord = z.infer<typeof releaseRecordSchema>;

export const catalogSchema = z.looseObject({
  pluginId: z.string(),
  count: z.number().int().nonnegative(),
  versions: z.array(releaseRecordSchema),
});

export type Catalog = z.infer<typeof catalogSchema>;
