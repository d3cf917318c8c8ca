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

/** Objects the records explain pass; every other object on the public site is a problem, named. */
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
    expect(found.problems).toHaveLength(2);
    expect(found.problems[0]).toMatch(/^3 public object\(s\) under the plugin's own names that no release in the catalog names/);
    expect(found.problems[0]).toContain(`downloads/${ID}-9.9.9.dmg`);
    expect(found.problems[1]).toMatch(/^1 object\(s\) on the public site that relcast did not write for bridge-plugin \("api\/v1\/plugins\/other\/appcast\.xml"\): .*delete them/);
    expect(found.warnings).toEqual([]);
  });

  it("leaves the site's pages and releases/ to their own checks, and reports anything else at the root, and the folder store's hidden files on the site", async () => {
    for (const key of ["index.html", "changelog.html", "changelog-1.html", "releases/1.0.0/other.bin"]) await put(key);
    const clean = await publicInventory(createFolderStore(dir), ID, [record("1.0.0", { fullReleaseNotesLink: `${APP}/release-notes/history.html`, releaseNotesLink: `${APP}/downloads/${ID}-notes%201.0.0.html` })], APP);
    expect(clean.problems.join("\n")).not.toMatch(/index\.html|changelog|releases\//);
    await put("evil.html");
    await put("downloads/.relcast-tmp-1234-0badc0ffee00");
    await put(".relcast-lock");
    // Under releases/ too: a static host serves that folder as well (a lock there is a run's, or a killed run's).
    await put("releases/.relcast-lock");
    // Named like the store's own but not as it makes them: nothing of relcast's wrote it.
    await put(`downloads/.relcast-tmp-1-${ID}-1.0.0.dmg`);
    const found = await publicInventory(createFolderStore(dir), ID, [record("1.0.0")], APP);
    expect(found.problems.join("\n")).toContain("evil.html");
    // A killed run's temp and lock files: warnings naming gc (a re-run completes the release and leaves them).
    const hidden = found.warnings.find((p) => p.includes("temp or lock file(s) of the folder store"));
    expect(hidden).toMatch(/^3 temp or lock file\(s\) .*\(\.relcast-lock, "downloads\/\.relcast-tmp-1234-0badc0ffee00", "releases\/\.relcast-lock"\).*run `relcast gc`/);
    expect(found.problems.join("\n")).not.toContain("temp or lock file(s) of the folder store");
    const odd = found.problems.find((p) => p.includes("not as it makes them"));
    expect(odd).toMatch(/^1 file\(s\) named like the folder store's temp and lock files but not as it makes them \("downloads\/\.relcast-tmp-1-bridge-plugin-1\.0\.0\.dmg"\)/);
  });
  it("a conditional-write probe object an interrupted S3 run left (.relcast/probe/…) is relcast's own: a warning naming gc, not a problem", async () => {
    await put(".relcast/probe/35f03fb5a7efa2e05a895fd4");
    const found = await publicInventory(createFolderStore(dir), ID, [record("1.0.0")], APP);
    expect(found.problems.join("\n")).not.toContain(".relcast/probe/");
    expect(found.warnings.join("\n")).toMatch(/1 conditional-write probe object\(s\) an interrupted run left \(".relcast\/probe\/35f03fb5a7efa2e05a895fd4"\): relcast gc removes them/);
  });
});
