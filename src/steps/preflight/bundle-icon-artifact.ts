import { createHash } from "node:crypto";
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { readBundleIcon } from "../../bundle/bundle-icon.js";
import type { BundleInfo } from "../../bundle/info-plist.js";
import type { ReleaseContext } from "../release-context.js";

/**
 * The bundle's icon for the downloads page: the largest PNG of the .icns
 * that CFBundleIconFile names, written into the work folder as the file the
 * upload step stores beside the release. Also says when the bundle's name
 * differs from the config's displayName, which the page and feed show.
 */
export async function bundleIconArtifact(ctx: Pick<ReleaseContext, "config" | "logger" | "workDir">, appDir: string, bundle: BundleInfo): Promise<ReleaseContext["icon"]> {
  if (bundle.bundleDisplayName !== undefined && bundle.bundleDisplayName !== ctx.config.displayName) {
    ctx.logger.warn(`the bundle is named "${bundle.bundleDisplayName}" (CFBundleDisplayName), but the config's displayName is "${ctx.config.displayName}": the downloads page and the appcast show the config's; change one so people see one name`);
  }
  const reading = await readBundleIcon(appDir, bundle.iconFile);
  if (reading.note) ctx.logger.warn(reading.note);
  if (!reading.icon) return undefined;
  const file = path.join(ctx.workDir, "icon.png");
  await writeFile(file, reading.icon.png);
  return {
    file, sizeBytes: reading.icon.png.length, sha256: createHash("sha256").update(reading.icon.png).digest("hex"),
    width: reading.icon.width, height: reading.icon.height,
  };
}
