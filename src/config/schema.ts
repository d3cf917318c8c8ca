import { z } from "zod";
import { httpUrlProblem } from "../core/http-url.js";
import { storeUrlProblem } from "../core/store-url.js";
import { xmlTextProblem } from "../core/xml-text.js";
import { bidiControlProblem } from "../core/bidi-controls.js";

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
  return httpUrlTemplateProblem(text) === undefined;
}

/** Why a URL template is not one Sparkle can read once `{version}` is filled in (checked with a sample version). */
export function httpUrlTemplateProblem(text: string): string | undefined {
  return httpUrlProblem(text.replaceAll("{version}", "1.0.0"));
}

/** Text that reaches appcast, catalog or pages: only characters XML 1.0 allows, and no bidi override that reorders what users see. */
export const xmlText = () => z.string().superRefine((value, ctx) => {
  const problem = xmlTextProblem(value);
  if (problem) ctx.addIssue({ code: "custom", message: `has a character feeds cannot hold (${problem}); remove it` });
  const bidi = bidiControlProblem(value);
  if (bidi) ctx.addIssue({ code: "custom", message: `${bidi}; remove it` });
});

/**
 * A value relcast sends as an HTTP header (Cache-Control): printable ASCII,
 * spaces inside only. S3 trims surrounding whitespace (so verify would find
 * the stored value unequal forever) and the upload refuses a control
 * character or a newline; refused here, where the fix is.
 */
const headerValue = () => z.string().min(1).superRefine((value, ctx) => {
  if (value.trim() !== value) ctx.addIssue({ code: "custom", message: `starts or ends with whitespace, which S3 drops from the header it stores; write ${JSON.stringify(value.trim())}` });
  const bad = [...value].find((c) => c < " " || c > "~");
  if (bad !== undefined) {
    const code = `U+${bad.codePointAt(0)!.toString(16).toUpperCase().padStart(4, "0")}`;
    ctx.addIssue({ code: "custom", message: `holds ${code}, which an HTTP header cannot carry (printable ASCII and inner spaces only); remove it` });
  }
});

const httpUrlTemplate = z.string().superRefine((value, ctx) => {
  const problem = httpUrlTemplateProblem(value);
  if (problem) ctx.addIssue({ code: "custom", message: `${problem} ({version} is replaced by the release's version)` });
});

/**
 * Every field carries its user-facing description (and, where the default is
 * applied in code rather than by zod, that default) as metadata: the JSON
 * Schema shipped as relcast.schema.json and docs/config.md are generated from
 * it (scripts/config-reference.mjs), so the reference cannot drift from the
 * parser. test/config/config-reference.test.ts checks the defaults against the
 * constants the code applies.
 */
const doc = (description: string, defaultValue?: unknown) => (defaultValue === undefined ? { description } : { description, default: defaultValue });

/** Feed-wide Sparkle options; the per-release ones are frozen into each record at publish time. */
export const appcastConfigSchema = z.strictObject({
  maxAppcastItems: z.number().int().min(0).optional()
    .meta(doc("The appcast keeps only the highest N builds per channel (0: every release). The catalog always keeps every release.", 100)),
  phasedRolloutInterval: z.number().int().min(1).optional()
    .meta(doc("`<sparkle:phasedRolloutInterval>` in seconds for new releases (the publish flag `--phased-rollout-interval` overrides it).")),
  releaseNotesUrl: httpUrlTemplate.optional()
    .meta(doc("`<sparkle:releaseNotesLink>` for new releases instead of inline notes, e.g. https://example.com/notes/{version}.html ({version} is filled in).")),
  fullReleaseNotesUrl: httpUrlTemplate.optional()
    .meta(doc("`<sparkle:fullReleaseNotesLink>` for new releases: a page with the full version history ({version} is filled in).")),
  link: httpUrlTemplate.optional()
    .meta(doc("The item's `<link>` for new releases, e.g. https://example.com/releases/{version} ({version} is filled in; informational updates need one). The publish flag --link overrides it.")),
  signedFeed: z.boolean().optional()
    .meta(doc(
      "Sign the appcast as Sparkle 2.9's sign_update does (for apps with SURequireSignedFeed). true: always; false: never (refused while the stored appcast is signed); " +
        "absent: when the bundle's Info.plist has SURequireSignedFeed or the stored appcast is signed already.",
    )),
  releaseNotes: z.enum(["inline", "page"]).optional()
    .meta(doc(
      "\"inline\": the notes are in the appcast item. \"page\": new releases link to a notes page relcast renders from the Markdown and hosts at " +
        "{appUrl}/release-notes/<version>.html (signed on a signed feed); not together with releaseNotesUrl.",
      "inline",
    )),
}).refine((a) => !(a.releaseNotes === "page" && a.releaseNotesUrl !== undefined), {
  message: "releaseNotes \"page\" and releaseNotesUrl both say where the notes are: keep one (\"page\" hosts them under appUrl; releaseNotesUrl links elsewhere)",
  path: ["releaseNotes"],
});

export const configSchema = z.strictObject({
  $schema: z.string().optional()
    .meta(doc("Where editors find this file's JSON Schema (relcast.schema.json, shipped in the package). relcast itself ignores it.")),
  pluginId: z
    .string()
    .regex(PLUGIN_ID_PATTERN, "must be lower-case letters, digits, '.', '_' or '-' (it becomes part of file names and URLs)")
    .max(PLUGIN_ID_MAX_LENGTH, `must be at most ${PLUGIN_ID_MAX_LENGTH} characters (it becomes part of every file name)`)
    .meta(doc("The plugin's id: part of every file name and URL (downloads/<pluginId>-<version>.dmg, api/v1/plugins/<pluginId>/appcast.xml). Never change it once released.")),
  displayName: xmlText().min(1, "must not be empty")
    .meta(doc("The name users see: the appcast's title, the downloads page, the records.")),
  publisher: xmlText().min(1, "must not be empty")
    .meta(doc("Who publishes the plugin, as users see it.")),
  appUrl: z
    .string()
    .superRefine((u, ctx) => {
      const problem = httpUrlProblem(u) ?? (/[?#]/.test(u) ? "has a query or fragment: give the plain root, such as https://example.com" : undefined);
      if (problem) ctx.addIssue({ code: "custom", message: problem });
    })
    .transform((u) => u.replace(/\/+$/, ""))
    .meta(doc("The public http(s) URL where the store's root is served: SUFeedURL, the download URLs and the site are under it (a trailing / is dropped).")),
  channel: z.string().regex(CHANNEL_PATTERN, "may hold only letters, digits, '.', '_' and '-'").default("stable")
    .meta(doc("Sparkle channel of new releases (the publish flag --channel overrides it); releases on \"stable\" reach every installed copy.")),
  timezone: z
    .string()
    .refine(isValidTimeZone, "is not an IANA time zone name (for example Europe/Berlin or America/New_York)")
    .optional()
    .meta(doc("IANA time zone in which records and pages show release dates, e.g. Europe/Berlin. Default: the machine's zone, else UTC.")),
  store: z.string().min(1).superRefine((u, ctx) => {
    const problem = storeUrlProblem(u);
    if (problem) ctx.addIssue({ code: "custom", message: problem });
  }).default("file://./public-store")
    .meta(doc("Where releases are written: file://<folder> (relative to this file's folder) or s3://<bucket>[/<prefix>]. The flag --store overrides it.")),
  assistantIntegration: z.array(xmlText()).optional()
    .meta(doc("Install steps, one per entry, that `relcast verify-install` prints when the installed plugin's bridge does not answer.")),
  artifactType: z.literal("dmg").default("dmg")
    .meta(doc("The download users install: a disk image (the only kind today).")),
  appcast: appcastConfigSchema.optional()
    .meta(doc("Feed-wide Sparkle settings: what installed copies read from the appcast (docs/sparkle.md).")),
  deltas: z
    .strictObject({
      maximum: z.number().int().min(0).max(50).optional()
        .meta(doc("Deltas from at most this many older builds on the release's channel and stable (as generate_appcast --maximum-deltas; 0: none).", 5)),
      compression: z.enum(["lzma", "zlib", "bzip2", "none"]).optional()
        .meta(doc("Compression of the delta container: lzma (Sparkle's default; needs the xz program), zlib (built into Node; Sparkle reads it), bzip2 (needs the bzip2 program) or none. Unset: lzma where xz is on the PATH, zlib elsewhere.")),
      diffLimitMiB: z.number().min(0).max(1024).optional()
        .meta(doc("Files larger than this many MiB are shipped whole inside the delta instead of diffed.", 16)),
    })
    .optional()
    .meta(doc("Sparkle binary delta updates made at publish time (docs/sparkle.md); --no-deltas skips them for one publish.")),
  s3: z
    .strictObject({
      region: z.string().min(1).optional()
        .meta(doc("Region to sign requests for (R2: \"auto\"). Default: AWS_REGION, then the AWS profile's region.")),
      endpoint: z.url({ error: "must be an absolute URL such as http://127.0.0.1:9000" }).optional()
        .meta(doc("Base URL of an S3-compatible service (MinIO, R2, B2, …). Default: AWS.")),
      forcePathStyle: z.boolean().optional()
        .meta(doc("true for MinIO and most self-hosted servers (http://host/bucket/key).", false)),
      requestChecksumCalculation: z.enum(["WHEN_SUPPORTED", "WHEN_REQUIRED"]).optional()
        .meta(doc("WHEN_REQUIRED stops the SDK from sending CRC32 checksum headers on every upload: use it for R2, B2 and other services that reject them.", "WHEN_SUPPORTED")),
      requestTimeoutMs: z.number().int().min(100).optional()
        .meta(doc("A request with no bytes moving for this many milliseconds is abandoned and retried.", 30000)),
      uploadConcurrency: z.number().int().min(1).max(64).optional()
        .meta(doc("Parts of a multipart upload in flight at once; each holds a part in memory.", 4)),
      partSizeMiB: z.number().int().min(5).max(5120).optional()
        .meta(doc("Multipart part size in MiB (as the aws cli; S3 needs at least 5).", 8)),
      conditionalWrites: z.enum(["prove", "unverified-single-writer"]).optional()
        .meta(doc(
          "\"prove\": the first write of a run waits until the store has shown it refuses losing If-None-Match/If-Match writes. " +
            "\"unverified-single-writer\": skip that, only where nothing else ever writes to the store (docs/s3-store.md says what it risks); every writing run warns.",
          "prove",
        )),
    })
    .optional()
    .meta(doc("Settings of an s3:// store (docs/s3-store.md). Credentials always come from the standard AWS chain (environment, profile, OIDC role), never from this file.")),
  cacheControl: z
    .strictObject({
      immutable: headerValue().optional()
        .meta(doc("Cache-Control of objects that never change (versioned downloads, records). Sent as an HTTP header: printable ASCII, no surrounding whitespace.", "public, max-age=31536000, immutable")),
      mutable: headerValue().optional()
        .meta(doc("Cache-Control of objects that change with each publish (catalog, appcast, pages, latest downloads). Sent as an HTTP header: printable ASCII, no surrounding whitespace.", "no-cache")),
    })
    .optional()
    .meta(doc("Cache-Control headers given to the objects a publish writes (an S3 store serves them with each object).")),
}).meta({
  title: "relcast.config.json",
  description: "Configuration of relcast, the release publisher for Sparkle-updated macOS plugins. Unknown keys are errors.",
});

export type RelcastConfigInput = z.input<typeof configSchema>;
export type RelcastConfig = z.output<typeof configSchema> & {
  /** Folder the config file was read from; relative store paths resolve against it. */
  baseDir: string;
  /** Where the config came from, for messages. */
  source: string;
  timezone: string;
};
