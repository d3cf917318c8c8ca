import { createHash } from "node:crypto";
import { mkdir, mkdtemp, readFile, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { readBundleInfo } from "../../../src/bundle/info-plist.js";
import type { RelcastConfig } from "../../../src/config/schema.js";
import type { Logger } from "../../../src/core/logger.js";
import { bundleIconArtifact } from "../../../src/steps/preflight/bundle-icon-artifact.js";
import { makeSamplePlugin } from "../../../scripts/sample-plugin.mjs";
import { ICON_256, icnsFile, typicalIcns } from "../../helpers/icns-bytes.js";

function collecting(): { logger: Logger; warnings: string[] } {
  const warnings: string[] = [];
  const logger = { info() {}, warn: (m: string) => warnings.push(m), error() {}, debug() {}, group: async <T>(_n: string, f: () => Promise<T>) => f() } as unknown as Logger;
  return { logger, warnings };
}

describe("preflight: the bundle's icon and display name", () => {
  it("writes the largest PNG into the work folder with its size and SHA-256, and warns when CFBundleDisplayName is not the config's displayName", async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), "relcast-icon-step-"));
    const p = await makeSamplePlugin({ dir, version: "1.0.0", build: 1, icon: { file: "AppIcon.icns", bytes: typicalIcns() }, plist: { CFBundleDisplayName: "Bridge" } });
    const workDir = path.join(dir, "work");
    await mkdir(workDir);
    const { logger, warnings } = collecting();
    const icon = await bundleIconArtifact({ config: { displayName: "Bridge Plugin" } as RelcastConfig, logger, workDir }, p.app, await readBundleInfo(p.app));
    expect(icon).toEqual({ file: path.join(workDir, "icon.png"), sizeBytes: ICON_256.length, sha256: createHash("sha256").update(ICON_256).digest("hex"), width: 256, height: 256 });
    expect((await readFile(icon!.file)).equals(ICON_256)).toBe(true);
    expect(warnings).toEqual([expect.stringContaining('the bundle is named "Bridge" (CFBundleDisplayName), but the config\'s displayName is "Bridge Plugin"')]);
  });

  it("no icon named: none, and no warning; an .icns without PNG: none, with the reason", async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), "relcast-icon-step-"));
    const plain = await makeSamplePlugin({ dir, version: "1.0.0", build: 1, plist: { CFBundleDisplayName: "Bridge Plugin" } });
    const quiet = collecting();
    expect(await bundleIconArtifact({ config: { displayName: "Bridge Plugin" } as RelcastConfig, logger: quiet.logger, workDir: dir }, plain.app, await readBundleInfo(plain.app))).toBeUndefined();
    expect(quiet.warnings).toEqual([]);
    const legacy = await makeSamplePlugin({ dir, version: "1.0.1", build: 2, icon: { file: "AppIcon.icns", bytes: icnsFile([{ type: "it32", data: Buffer.alloc(64) }]) } });
    const noted = collecting();
    expect(await bundleIconArtifact({ config: { displayName: "BridgePlugin" } as RelcastConfig, logger: noted.logger, workDir: dir }, legacy.app, await readBundleInfo(legacy.app))).toBeUndefined();
    expect(noted.warnings).toEqual([expect.stringContaining("holds no PNG image (its elements: it32): the downloads page shows no icon")]);
  });
});
