import type { RelcastConfig } from "../config/schema.js";
import type { AutoupdateOptions } from "./autoupdate-options.js";
import type { ReleaseNotes } from "./release-notes.js";
import type { DeltaRecord, ReleaseRecord } from "./record-schema.js";
import {
  APPCAST_KEY, dmgFileName, iconFileName, latestKey, publicAppcastUrl, publicDownloadUrl, versionedKey, zipFileName,
} from "./release-layout.js";
import { publishedTimes } from "./timestamps.js";

/** A file of the release on this machine (the disk image, the zip). */
export interface LocalArtifact {
  file: string;
  sizeBytes: number;
  sha256: string;
}

/** What a record says about the store (its URIs and bucket); the store itself is not needed. */
export interface RecordStore {
  uriFor(key: string): string;
  readonly location: { bucket: string };
}

export interface RecordInputs {
  config: RelcastConfig;
  store: RecordStore;
  version: string;
  summary: string;
  notes: ReleaseNotes;
  /** Notes in other languages (`--localized-notes`), sorted by language. */
  localizedNotes?: ReadonlyArray<{ lang: string; notes: ReleaseNotes }> | undefined;
  dmg: LocalArtifact;
  zip: LocalArtifact;
  buildNumber: number;
  edSignature: string;
  minimumSystemVersion?: string | undefined;
  hardwareRequirements?: string | undefined;
  keyChangeAllowed?: boolean | undefined;
  autoupdateOptions?: AutoupdateOptions | undefined;
  publishedAt: Date;
  /** The bundle's icon as a PNG (none: no `icon` field). */
  icon?: (LocalArtifact & { width: number; height: number }) | undefined;
  /** Delta updates made for this release (none: no `deltas` field). */
  deltas?: DeltaRecord[] | undefined;
}

/** The §2.6 record, every field in the spec's form. Pure: no I/O. */
export function buildRecord(input: RecordInputs): ReleaseRecord {
  const { config, store, version } = input;
  const dmgName = dmgFileName(config.pluginId, version);
  const zipName = zipFileName(config.pluginId, version);
  const times = publishedTimes(input.publishedAt, config.timezone);
  const dmgUrl = publicDownloadUrl(config.appUrl, dmgName);
  const record: ReleaseRecord = {
    pluginId: config.pluginId,
    displayName: config.displayName,
    publisher: config.publisher,
    version,
    semver: version,
    channel: config.channel,
    artifactType: config.artifactType,
    summary: input.summary,
    releaseNotes: input.notes.text,
    releaseNotesList: input.notes.list,
    releaseNotesMarkdown: input.notes.markdown,
    ...(input.localizedNotes && input.localizedNotes.length > 0 ? { localizedReleaseNotes: input.localizedNotes.map((l) => ({ lang: l.lang, markdown: l.notes.markdown })) } : {}),
    sizeBytes: input.dmg.sizeBytes,
    sha256: input.dmg.sha256,
    downloadUrl: store.uriFor(versionedKey(version, dmgName)),
    publicDownloadUrl: dmgUrl,
    publicLatestDownloadUrl: dmgUrl,
    appcastUrl: store.uriFor(APPCAST_KEY),
    publicAppcastUrl: publicAppcastUrl(config.appUrl, config.pluginId),
    objectStore: {
      bucket: store.location.bucket,
      objectPath: versionedKey(version, dmgName),
      artifactFileName: dmgName,
      latestObjectPath: latestKey(dmgName),
    },
    autoupdate: {
      publicDownloadUrl: publicDownloadUrl(config.appUrl, zipName),
      buildNumber: input.buildNumber,
      edSignature: input.edSignature,
      sizeBytes: input.zip.sizeBytes,
      sha256: input.zip.sha256,
      ...(input.minimumSystemVersion ? { minimumSystemVersion: input.minimumSystemVersion } : {}),
      ...(input.hardwareRequirements ? { hardwareRequirements: input.hardwareRequirements } : {}),
      ...(input.keyChangeAllowed ? { keyChangeAllowed: true as const } : {}),
      ...input.autoupdateOptions,
      ...(input.deltas && input.deltas.length > 0 ? { deltas: input.deltas } : {}),
    },
    ...(input.icon ? { icon: { fileName: iconFileName(config.pluginId, version), sizeBytes: input.icon.sizeBytes, sha256: input.icon.sha256, width: input.icon.width, height: input.icon.height } } : {}),
    ...(config.assistantIntegration ? { assistantIntegration: config.assistantIntegration } : {}),
    publishedAt: times.publishedAt,
    publishedAtIso: times.publishedAtIso,
    publishedAtLocal: times.publishedAtLocal,
    publishedAtTimezone: times.publishedAtTimezone,
    updatedAt: times.publishedAt,
  };
  return record;
}
