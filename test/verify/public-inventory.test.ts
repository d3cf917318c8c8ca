import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ReleaseRecord } from "../../src/domain/record-schema.js";
import { createFolderStore } from "../../src/store/folder-store.js";
import { publicInventory } from "../../src/verify/public-inventory.js";

const ID = "bridge-plugin";
const APP = "https://updates.example.com";

function record(version: string, autoupdate: Record<string, unknown> = {}): ReleaseRecord {
  return {
    pluginId: ID, version, channel: "stable",
    objectStore: { artifactFileName: `${ID}-${version}.dmg` },
    autoupdate: { publicDownloadUrl: `${APP}/downloads/${ID}-${version}.zip`, buildNumber: 1, edSignature: "c2ln", sizeBytes: 10, ...autoupdate },
    publicAppcastUrl: `${APP}/api/v1/plugins/${ID}/appcast.xml`,
  } as unknown as ReleaseRecord;
}

/** Objects the records explain pass; under the plugin's own names others are problems, elsewhere warnings. */
describe("verify's inventory of the site's public folders", () => {
  let dir: string;
  const put = async (key: string) => {
    await mkdir(path.dirname(path.join(dir, key)), { recursive: true });
    await writeFile(path.join(dir, key), "x");
  };
  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), "relcast-inventory-"));
    for (const key of [
      `downloads/${ID}-1.0.0.dmg`, `downloads/${ID}-1.0.0.zip`, `downloads/${ID}-latest.dmg`, `downloads/${ID}-latest.json`,
      `api/v1/plugins/${ID}/appcast.xml`, `api/v1/plugins/${ID}/releases.json`,
      // Pages the record's own links name under appUrl: the publisher's, not strays.
      "release-notes/history.html", `downloads/${ID}-notes 1.0.0.html`,
    ]) await put(key);
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it("passes what the records explain, their linked pages under appUrl included", async () => {
    const records = [record("1.0.0", { fullReleaseNotesLink: `${APP}/release-notes/history.html?x=1`, releaseNotesLink: `${APP}/downloads/${ID}-notes%201.0.0.html` })];
    expect(await publicInventory(createFolderStore(dir), ID, records, APP)).toEqual({ problems: [], warnings: [] });
  });

  it("reports a linked page as a stray once no record links it, and strays under the plugin's names as problems", async () => {
    await put(`downloads/${ID}-9.9.9.dmg`);
    await put("api/v1/plugins/other/appcast.xml");
    const found = await publicInventory(createFolderStore(dir), ID, [record("1.0.0")], APP);
    expect(found.problems).toHaveLength(1);
    expect(found.problems[0]).toMatch(/^3 public object\(s\) under the plugin's own names that no release in the catalog names/);
    expect(found.problems[0]).toContain(`downloads/${ID}-9.9.9.dmg`);
    expect(found.warnings).toHaveLength(1);
    expect(found.warnings[0]).toContain("api/v1/plugins/other/appcast.xml");
  });
});
