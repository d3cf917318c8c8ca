import { z } from "zod";
import { isHttpUrl } from "../core/http-url.js";
import { xmlTextProblem } from "../core/xml-text.js";

export const PLUGIN_ID_PATTERN = /^[a-z0-9][a-z0-9._-]*$/;
/** A plugin id becomes part of every file name (`<id>-<version>-latest.json` and friends): 64 keeps those far below 255 bytes. */
export const PLUGIN_ID_MAX_LENGTH = 64;
export const CHANNEL_PATTERN = /^[A-Za-z0-9._-]+$/;

/** Answers so far, by name: every record of a catalog names a zone, nearly always the same one, and each Intl check costs about 0.1 ms. */
const timeZoneAnswers = new Map<string, boolean>();

/** IANA zone names are checked against the runtime's own time-zone database. */
export function isValidTimeZone(name: string): boolean {
  let valid = timeZoneAnswers.get(name);
  if (valid === undefined) {
    try {
      new Intl.DateTimeFormat("en-US", { timeZone: name });
      valid = true;
    } catch {
      valid = false;
    }
    if (timeZoneAnswers.size < 1024) timeZoneAnswers.set(name, valid);
  }
  return valid;
}

/** Sparkle drops release-notes links that are not http(s); `{version}` is filled in per release. */
export function isHttpUrlTemplate(text: string): boolean {
  return isHttpUrl(text.replaceAll("{version}", "1.0.0"));
}

/** Text that reaches appcast, catalog or pages: only characters XML 1.0 allows. */
export const xmlText = () => z.string().superRefine((value, ctx) => {
  const problem = xmlTextProblem(value);
  if (problem) ctx.addIssue({ code: "custom", message: `has a character feeds cannot hold (${problem}); remove it` });
});

const httpUrlTemplate = z.string().refine(isHttpUrlTemplate, "must be an absolute http(s) URL ({version} is replaced by the release's version)");

/** Feed-wide Sparkle options; the per-release ones are frozen into each record at publish time. */
export const appcastConfigSchema = z.strictObject({
  /** The appcast keeps only the highest N builds per channel (default 100; 0 = every release); the catalog keeps every release. */
  maxAppcastItems: z.number().int().min(0).optional(),
  /** Default `<sparkle:phasedRolloutInterval>` in seconds for new releases. */
  phasedRolloutInterval: z.number().int().min(1).optional(),
  /** `<sparkle:releaseNotesLink>` for new releases instead of inline notes, e.g. https://example.com/notes/{version}.html */
  releaseNotesUrl: httpUrlTemplate.optional(),
  /** `<sparkle:fullReleaseNotesLink>` for new releases (the full version history). */
  fullReleaseNotesUrl: httpUrlTemplate.optional(),
  /** The item's `<link>` for new releases, e.g. https://example.com/releases/{version} (needed by informational updates). */
  link: httpUrlTemplate.optional(),
  /**
   * Sign the appcast as Sparkle 2.9's sign_update does (for apps with SURequireSignedFeed). true: always;
   * false: never; absent: when the bundle's Info.plist has SURequireSignedFeed or the stored appcast is signed.
   */
  signedFeed: z.boolean().optional(),
  /**
   * "page": new releases link to a notes page relcast renders from the Markdown and hosts at
   * `{app_url}/release-notes/<version>.html` (signed on a signed feed); "inline" (default): notes in the item.
   */
  releaseNotes: z.enum(["inline", "page"]).optional(),
}).refine((a) => !(a.releaseNotes === "page" && a.releaseNotesUrl !== undefined), {
  message: "releaseNotes \"page\" and releaseNotesUrl both say where the notes are: keep one (\"page\" hosts them under appUrl; releaseNotesUrl links elsewhere)",
  path: ["releaseNotes"],
});

export const configSchema = z.strictObject({
  $schema: z.string().optional(),
  pluginId: z
    .string()
    .regex(PLUGIN_ID_PATTERN, "must be lower-case letters, digits, '.', '_' or '-' (it becomes part of file names and URLs)")
    .max(PLUGIN_ID_MAX_LENGTH, `must be at most ${PLUGIN_ID_MAX_LENGTH} characters (it becomes part of every file name)`),
  displayName: xmlText().min(1, "must not be empty"),
  publisher: xmlText().min(1, "must not be empty"),
  appUrl: z
    .string()
    .refine((u) => isHttpUrl(u) && !/[?#]/.test(u), "must be an absolute http(s) URL such as https://example.com (no spaces, control characters, query or fragment)")
    .transform((u) => u.replace(/\/+$/, "")),
  channel: z.string().regex(CHANNEL_PATTERN, "may hold only letters, digits, '.', '_' and '-'").default("stable"),
  timezone: z
    .string()
    .refine(isValidTimeZone, "is not an IANA time zone name (for example Europe/Berlin or America/New_York)")
    .optional(),
  store: z.string().min(1).default("file://./public-store"),
  assistantIntegration: z.array(xmlText()).optional(),
  artifactType: z.literal("dmg").default("dmg"),
  appcast: appcastConfigSchema.optional(),
  /** Sparkle delta updates made at publish time (docs/sparkle.md). */
  deltas: z
    .strictObject({
      /** Deltas from at most this many older builds (default 5, as generate_appcast --maximum-deltas; 0 = none). */
      maximum: z.number().int().min(0).max(50).optional(),
      /** Container compression: lzma (Sparkle's default), bzip2 or none. */
      compression: z.enum(["lzma", "bzip2", "none"]).optional(),
      /** Files larger than this (MiB) are shipped whole inside the delta instead of diffed (default 16). */
      diffLimitMiB: z.number().min(0).max(1024).optional(),
    })
    .optional(),
  /** Only for s3:// stores; credentials always come from the standard AWS chain. */
  s3: z
    .strictObject({
      region: z.string().min(1).optional(),
      endpoint: z.url({ error: "must be an absolute URL such as http://127.0.0.1:9000" }).optional(),
      forcePathStyle: z.boolean().optional(),
      requestChecksumCalculation: z.enum(["WHEN_SUPPORTED", "WHEN_REQUIRED"]).optional(),
      /** A request with no bytes moving for this long is abandoned and retried (default 30000). */
      requestTimeoutMs: z.number().int().min(100).optional(),
      /** Parts of a multipart upload in flight at once (default 4; each holds a part in memory). */
      uploadConcurrency: z.number().int().min(1).max(64).optional(),
      /** Multipart part size in MiB (default 8, as the aws cli; S3 needs at least 5). */
      partSizeMiB: z.number().int().min(5).max(5120).optional(),
      /**
       * `prove` (default): the first write of a run waits until the store has shown it refuses losing
       * If-None-Match/If-Match writes. `unverified-single-writer`: skip that, only where nothing else ever
       * writes to the store (docs/s3-store.md says what it risks); every writing run warns.
       */
      conditionalWrites: z.enum(["prove", "unverified-single-writer"]).optional(),
    })
    .optional(),
  cacheControl: z
    .strictObject({
      immutable: z.string().min(1).optional(),
      mutable: z.string().min(1).optional(),
    })
    .optional(),
});

export type RelcastConfigInput = z.input<typeof configSchema>;
export type RelcastConfig = z.output<typeof configSchema> & {
  /** Folder the config file was read from; relative store paths resolve against it. */
  baseDir: string;
  /** Where the config came from, for messages. */
  source: string;
  timezone: string;
};
