import { stat } from "node:fs/promises";
import { caseTwinOf } from "../../domain/channel-name.js";
import { RelcastError } from "../../core/errors.js";
import { parseStoredJson } from "../../core/stored-json.js";
import { publicEdKeyProblem, readBundleInfo } from "../../bundle/info-plist.js";
import { checkBundleTree } from "../../bundle/bundle-tree-check.js";
import { checkBundleExecutable } from "../../bundle/bundle-executable.js";
import { bundleIconArtifact } from "./bundle-icon-artifact.js";
import { hardwareRequirementsOf } from "../../bundle/mach-o.js";
import { appcastLimit } from "../../domain/appcast.js";
import { buildOrderEntriesOf, readCatalogView } from "../../catalog/catalog-view.js";
import { indexTrustOf } from "../../catalog/feed-signing.js";
import { loadReleaseNotes } from "./notes-file.js";
import { parseLocalizedNotesArgs, readLocalizedNotes } from "./localized-notes.js";
import { requireXmlText } from "../../core/xml-text.js";
import { DOWNLOADS_PREFIX, ICONS_PREFIX, LATEST_PREFIX, publicApiPrefix, RELEASE_NOTES_PREFIX, RELEASES_PREFIX, recordKey } from "../../domain/release-layout.js";
import { releaseRecordSchema } from "../../domain/record-schema.js";
import type { ReleaseContext } from "../release-context.js";
import type { Step } from "../step.js";
import { changedOptions, resolveAutoupdateOptions } from "../../domain/autoupdate-options.js";
import { assertBuildOrder } from "./build-order-check.js";
import { describeStoreLocation } from "../../store/store-location.js";
import { snapshotDiskImage } from "./disk-image-snapshot.js";
import { checkContinuity } from "./continuity-check.js";
import { recordsWithoutCatalog } from "./orphan-records.js";
import { startDiskImageUpload } from "../upload/early-upload.js";

async function requireDirectory(dir: string): Promise<void> {
  const st = await stat(dir).catch(() => undefined);
  if (!st) throw new RelcastError("E_INPUT", `plugin bundle not found: ${dir}`, "pass --app the path of the built .bundle/.app folder");
  if (!st.isDirectory()) throw new RelcastError("E_INPUT", `--app ${dir} is a file, not a bundle folder`, "pass --app the bundle folder itself (not a zip or dmg)");
}

async function requireDiskImage(file: string): Promise<void> {
  const st = await stat(file).catch(() => undefined);
  if (!st) throw new RelcastError("E_INPUT", `disk image not found: ${file}`, "pass --dmg the path of the built .dmg");
  if (!st.isFile()) throw new RelcastError("E_INPUT", `--dmg ${file} is not a file`, "pass --dmg the path of the built .dmg");
  if (st.size === 0) throw new RelcastError("E_INPUT", `disk image ${file} is empty (0 bytes)`, "rebuild the disk image; an empty file cannot be installed");
}

/** CFBundleVersion must be a plain integer (it is `autoupdate.buildNumber`), else --build-number. */
function resolveBuildNumber(ctx: ReleaseContext): number {
  const fromFlag = ctx.inputs.buildNumber;
  const fromPlist = ctx.bundle?.bundleVersion;
  if (fromPlist !== undefined && /^\d+$/.test(fromPlist)) {
    // sparkle:version is the number written back as decimal: it must read back as the same text, within --build-number's bound.
    if (!/^(0|[1-9]\d{0,14})$/.test(fromPlist)) {
      throw new RelcastError(
        "E_PLIST",
        `CFBundleVersion "${fromPlist}" in Info.plist ${fromPlist.length > 15 ? "has more than 15 digits" : "has leading zeros"}: it would be written as sparkle:version ${BigInt(fromPlist)} and every later check would find the two differ`,
        "set CFBundleVersion to an integer of at most 15 digits without leading zeros (e.g. 42, or a date-based 202611271200)",
      );
    }
    const n = Number(fromPlist);
    if (fromFlag !== undefined && fromFlag !== n) {
      throw new RelcastError("E_PLIST", `--build-number ${fromFlag} differs from CFBundleVersion ${fromPlist} in Info.plist`, "drop --build-number or fix CFBundleVersion; Sparkle compares the bundle's own CFBundleVersion");
    }
    return n;
  }
  if (fromFlag !== undefined) {
    if (fromPlist !== undefined) {
      ctx.logger.warn(`CFBundleVersion "${fromPlist}" is not ${fromFlag}: an installed copy reports "${fromPlist}" to Sparkle, which may offer build ${fromFlag} again; relcast verify reports this mismatch`);
    }
    return fromFlag;
  }
  throw new RelcastError(
    "E_PLIST",
    fromPlist === undefined ? "Info.plist has no CFBundleVersion" : `CFBundleVersion "${fromPlist}" in Info.plist is not an integer build number`,
    "set CFBundleVersion to an integer build number, or pass --build-number <n>",
  );
}

/** The folders a publish of `version` writes into. */
function publishFolders(pluginId: string, version: string, languages: readonly string[]): string[] {
  return [
    "", RELEASES_PREFIX, `${RELEASES_PREFIX}${version}/`, LATEST_PREFIX, DOWNLOADS_PREFIX, ICONS_PREFIX, publicApiPrefix(pluginId), RELEASE_NOTES_PREFIX,
    ...languages.map((lang) => `${RELEASE_NOTES_PREFIX}${lang}/`),
  ];
}

function channelsOf(view: ReleaseContext["catalog"]): Set<string> {
  const names = new Set<string>();
  for (const e of view?.entries ?? []) names.add(e.channel);
  return names;
}

/** All validation; nothing is written. */
export const preflightStep: Step = {
  name: "preflight",
  async run(ctx) {
    const { inputs, key } = ctx;
    await requireDirectory(inputs.appDir);
    await requireDiskImage(inputs.dmgFile);
    ctx.bundle = await readBundleInfo(inputs.appDir);
    await checkBundleTree(inputs.appDir);
    const architectures = await checkBundleExecutable(inputs.appDir, ctx.bundle.bundleExecutable);
    const localizedArgs = parseLocalizedNotesArgs(inputs.localizedNotes ?? []);
    ctx.notes = await loadReleaseNotes({ notesFile: inputs.notesFile, changelogFile: inputs.changelogFile }, inputs.version);
    ctx.localizedNotes = await readLocalizedNotes(localizedArgs);
    if (inputs.summary !== undefined) requireXmlText(inputs.summary, "--summary");
    const short = ctx.bundle.shortVersion;
    if (short !== undefined && short !== inputs.version) {
      throw new RelcastError("E_PLIST", `CFBundleShortVersionString in Info.plist is ${short}, but --version is ${inputs.version}`, "publish the version the bundle was built as, or rebuild the bundle with the new version");
    }
    const minimumSystem = ctx.bundle.minimumSystemVersion;
    if (minimumSystem !== undefined && !/^\d{1,4}(\.\d{1,4}){0,2}$/.test(minimumSystem)) {
      throw new RelcastError("E_PLIST", `LSMinimumSystemVersion "${minimumSystem}" in Info.plist is not a macOS version`, "write it as numbers and dots, e.g. 12.0 (it becomes sparkle:minimumSystemVersion)");
    }
    ctx.hardwareRequirements = hardwareRequirementsOf(architectures, minimumSystem);
    ctx.icon = await bundleIconArtifact(ctx, inputs.appDir, ctx.bundle);
    const keyProblem = ctx.bundle.publicEdKey === undefined ? undefined : publicEdKeyProblem(ctx.bundle.publicEdKey);
    if (keyProblem) {
      throw new RelcastError(
        "E_PLIST",
        `SUPublicEDKey "${ctx.bundle.publicEdKey}" in the bundle's Info.plist is malformed: ${keyProblem}`,
        `set SUPublicEDKey to the base64 public key Sparkle's generate_keys prints (this signing key's is ${key.publicKeyBase64})`,
      );
    }
    if (ctx.bundle.publicEdKey === undefined) {
      ctx.logger.warn(
        `the bundle's Info.plist has no SUPublicEDKey: copies updated to this version could not check the edSignature of later updates (Sparkle would rely on Apple code signing alone); add SUPublicEDKey = ${key.publicKeyBase64} (relcast keys public prints it)`,
      );
    } else if (ctx.bundle.publicEdKey !== key.publicKeyBase64) {
      throw new RelcastError(
        "E_KEY",
        `the signing key (${key.source}) does not match SUPublicEDKey in the bundle's Info.plist; installed copies would reject this update`,
        `sign with the key whose public key is SUPublicEDKey (relcast keys public --key-file <f> prints it; this key's is ${key.publicKeyBase64})`,
      );
    }
    if (ctx.bundle.requireSignedFeed && ctx.config.appcast?.signedFeed === false) {
      throw new RelcastError(
        "E_CONFIG",
        `the bundle's Info.plist has SURequireSignedFeed, but the config (${ctx.config.source}) says appcast.signedFeed false: the app would refuse the unsigned appcast and stop updating`,
        "remove appcast.signedFeed (or set it to true), or build the bundle without SURequireSignedFeed",
      );
    }
    ctx.feedSigning = {
      key, requiredBy: ctx.bundle.requireSignedFeed ? "SURequireSignedFeed is set in the bundle's Info.plist" : undefined,
      keyCheckedByBundle: ctx.bundle.publicEdKey === key.publicKeyBase64, warn: (line) => ctx.logger.warn(line),
    };
    ctx.buildNumber = resolveBuildNumber(ctx);
    ctx.autoupdateOptions = resolveAutoupdateOptions(
      ctx.config, { ...inputs.autoupdate, localizedNotesLanguages: ctx.localizedNotes.map((l) => l.lang) }, inputs.version, ctx.buildNumber, minimumSystem,
    );
    await ctx.store.checkReachable();
    // A store that would let a concurrent publish overwrite this one's writes is refused before anything is zipped.
    if (!inputs.dryRun) await ctx.store.proveConditionalWrites?.();
    // A link planted in a folder the publish writes to would send its bytes out of the store: refuse before the first write.
    const stray = (await ctx.store.strayEntries?.(publishFolders(ctx.config.pluginId, inputs.version, ctx.localizedNotes.map((l) => l.lang)))) ?? [];
    if (stray.length > 0) {
      throw new RelcastError("E_STORE", `the store holds what relcast never writes: ${stray[0]}${stray.length > 1 ? ` (and ${stray.length - 1} more)` : ""}`, "remove each from the store (the links, devices, pipes or sockets named; relcast verify lists them all) and publish again");
    }
    // A catalog someone broke by hand stops the run here, before any upload.
    ctx.catalog = await readCatalogView(ctx.store, appcastLimit(ctx.config), indexTrustOf(ctx.feedSigning ?? {}));
    // One store (or prefix) holds one plugin: its catalog, feeds and pages are that plugin's.
    if (ctx.catalog !== undefined && ctx.catalog.pluginId !== ctx.config.pluginId) {
      throw new RelcastError(
        "E_CONFIG",
        `this store holds plugin "${ctx.catalog.pluginId}" (its catalog says so), but the config (${ctx.config.source}) publishes "${ctx.config.pluginId}"`,
        `use another store or prefix for "${ctx.config.pluginId}", or set pluginId to "${ctx.catalog.pluginId}" if this is that plugin`,
      );
    }
    const where = describeStoreLocation(ctx.store.location, ctx.config.s3?.endpoint);
    // Records without a catalog: publishes racing this one, or a lost catalog; checked against, and listed when the catalog is created.
    ctx.catalog ??= await recordsWithoutCatalog(ctx.store, ctx.config.pluginId, inputs.version, where, appcastLimit(ctx.config), (m) => ctx.logger.warn(m));
    // Said on every publish into a store without releases (not only the very first), so a typo in the store URL shows at once.
    if (ctx.catalog === undefined || ctx.catalog.count === 0) {
      ctx.logger.warn(
        `publishing the first release into ${where}: it holds no releases yet. ` +
          "If earlier releases went somewhere else, stop here and fix --store or the config's store",
      );
    }
    const twin = caseTwinOf(ctx.config.channel, channelsOf(ctx.catalog));
    if (twin !== undefined) {
      throw new RelcastError(
        "E_INPUT",
        `channel "${ctx.config.channel}" differs from the existing channel "${twin}" only in case; Sparkle compares channels exactly, so it would be a new channel no installed copy follows`,
        `publish to "${twin}" (--channel ${twin}, or "channel": "${twin}" in the config)`,
      );
    }
    await checkContinuity(ctx, ctx.bundle, ctx.catalog);
    assertBuildOrder({ version: inputs.version, build: String(ctx.buildNumber), channel: ctx.config.channel }, buildOrderEntriesOf(ctx.catalog));
    // Copied and hashed while the bundle is zipped; awaited by the plan, or below when this version has a record.
    ctx.dmgSnapshot = snapshotDiskImage(inputs.dmgFile, ctx.workDir, ctx.stopping);
    ctx.dmgSnapshot.catch(() => undefined);
    const existing = await ctx.store.get(recordKey(inputs.version));
    if (existing) {
      const record = parseStoredJson(existing.body, releaseRecordSchema);
      if (!record) {
        throw new RelcastError("E_CATALOG", `the stored record ${recordKey(inputs.version)} is not a valid release record`, "inspect it by hand; relcast never overwrites a published record");
      }
      ctx.existingRecord = record;
      const changed = changedOptions(record, ctx.autoupdateOptions);
      if (changed.length > 0) {
        throw new RelcastError(
          "E_CONFLICT",
          `version ${inputs.version} is already published with other appcast options (${changed.join(", ")})`,
          "published records are immutable: re-run with the flags of the first publish, or publish a new version",
        );
      }
      const dmg = await ctx.dmgSnapshot;
      if (record.sha256 !== undefined && record.sha256 !== dmg.sha256) {
        throw new RelcastError(
          "E_CONFLICT",
          `version ${inputs.version} is already published with a different disk image (sha256 ${record.sha256.slice(0, 12)}…, yours ${dmg.sha256.slice(0, 12)}…)`,
          "published versions are immutable: bump the version (e.g. the next patch) and publish that",
        );
      }
    }
    // On S3 the disk image's parts go out while the bundle is zipped; the upload step completes the object.
    startDiskImageUpload(ctx);
  },
};
