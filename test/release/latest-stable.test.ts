import { cp, mkdir, readdir, readFile, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../helpers/run-cli.js";
import { makeWorkspace, type Workspace } from "../helpers/workspace.js";

/**
 * `latest` (releases/latest/, downloads/<id>-latest.*, the page's latest
 * version) is the newest stable release: a higher version on another
 * channel never takes it, and verify expects the same.
 */
describe("latest is the newest stable release", () => {
  let ws: Workspace;
  const latestDir = () => path.join(ws.storeDir, "releases", "latest");
  beforeAll(async () => {
    ws = await makeWorkspace();
    for (const [version, build, more] of [["1.0.0", 100, []], ["2.0.0", 200, ["--channel", "beta"]], ["2.1.0-beta.1", 210, ["--channel", "beta"]]] as const) {
      const res = await runCli(ws.publishArgs(await ws.plugin(version, build), version, [...more]));
      expect(res.code, res.stderr).toBe(0);
    }
  });
  afterAll(() => rm(ws.dir, { recursive: true, force: true }));

  it("keeps 1.0.0 as latest after a higher release on the beta channel", async () => {
    expect((await readdir(latestDir())).sort()).toEqual(["bridge-plugin-1.0.0.dmg", "bridge-plugin-1.0.0.zip"]);
    const downloads = path.join(ws.storeDir, "downloads");
    expect(await readFile(path.join(downloads, "bridge-plugin-latest.dmg"))).toEqual(await readFile(path.join(ws.storeDir, "releases", "1.0.0", "bridge-plugin-1.0.0.dmg")));
    expect(JSON.parse(await readFile(path.join(downloads, "bridge-plugin-latest.json"), "utf8")).version).toBe("1.0.0");
    const verify = await runCli(["verify", "--config", ws.configFile]);
    expect(verify.code, verify.stdout + verify.stderr).toBe(0);
  });

  it("verify reports a beta in releases/latest/, and site sync puts the stable release back", async () => {
    await cp(path.join(ws.storeDir, "releases", "2.0.0", "bridge-plugin-2.0.0.zip"), path.join(latestDir(), "bridge-plugin-2.0.0.zip"));
    const verify = await runCli(["verify", "--config", ws.configFile]);
    expect(verify.code).toBe(11);
    const sync = await runCli(["site", "sync", "--config", ws.configFile]);
    expect(sync.code, sync.stderr).toBe(0);
    expect((await readdir(latestDir())).sort()).toEqual(["bridge-plugin-1.0.0.dmg", "bridge-plugin-1.0.0.zip"]);
    expect((await runCli(["verify", "--config", ws.configFile])).code).toBe(0);
  });

  it("verify holds downloads/<id>-latest.json to the state the site step writes", async () => {
    const state = path.join(ws.storeDir, "downloads", "bridge-plugin-latest.json");
    const good = await readFile(state, "utf8");
    await writeFile(state, good.replace(/"zipSha256": "[0-9a-f]+"/, `"zipSha256": "${"0".repeat(64)}"`));
    const tampered = await runCli(["verify", "--config", ws.configFile]);
    expect(tampered.code).toBe(11);
    expect(tampered.stdout + tampered.stderr).toMatch(/bridge-plugin-latest\.json is not the state the site step writes for 1\.0\.0/);
    await writeFile(state, good);
    expect((await runCli(["verify", "--config", ws.configFile])).code).toBe(0);
  });

  it("an object in releases/latest/ that no release record backs never counts as latest: the next publish replaces and removes it", async () => {
    // Planted by hand or another tool (anyone who can write the store): a higher version with no releases/9.9.9/release.json.
    await cp(path.join(ws.storeDir, "releases", "1.0.0", "bridge-plugin-1.0.0.dmg"), path.join(latestDir(), "bridge-plugin-9.9.9.dmg"));
    const res = await runCli(ws.publishArgs(await ws.plugin("1.0.1", 101), "1.0.1"));
    expect(res.code, res.stderr).toBe(0);
    expect(res.stderr).not.toContain("9.9.9 is higher");
    expect((await readdir(latestDir())).sort()).toEqual(["bridge-plugin-1.0.1.dmg", "bridge-plugin-1.0.1.zip"]);
    const verify = await runCli(["verify", "--config", ws.configFile]);
    expect(verify.code, verify.stdout + verify.stderr).toBe(0);
  });

  it("a planted record beside the planted object (empty, or another version's) does not make it latest: the publish replaces it, and site sync removes it", async () => {
    const recordDir = path.join(ws.storeDir, "releases", "9.9.9");
    const plant = async (record: string | Buffer) => {
      await mkdir(recordDir, { recursive: true });
      await writeFile(path.join(recordDir, "release.json"), record);
      await cp(path.join(ws.storeDir, "releases", "1.0.0", "bridge-plugin-1.0.0.dmg"), path.join(latestDir(), "bridge-plugin-9.9.9.dmg"));
    };
    const copyOf101 = await readFile(path.join(ws.storeDir, "releases", "1.0.1", "release.json"));
    for (const [record, version, build] of [["", "1.0.2", 102], [copyOf101, "1.0.3", 103]] as const) {
      await plant(record);
      const res = await runCli(ws.publishArgs(await ws.plugin(version, build), version));
      expect(res.code, res.stderr).toBe(0);
      expect(res.stderr + res.stdout).not.toContain("9.9.9 is higher");
      expect((await readdir(latestDir())).sort()).toEqual([`bridge-plugin-${version}.dmg`, `bridge-plugin-${version}.zip`]);
    }
    // site sync holds releases/latest/ to the same rule: a higher version with no valid record is removed, the catalog's latest kept.
    await plant(copyOf101);
    const sync = await runCli(["site", "sync", "--config", ws.configFile]);
    expect(sync.code, sync.stdout + sync.stderr).toBe(0);
    expect((await readdir(latestDir())).sort()).toEqual(["bridge-plugin-1.0.3.dmg", "bridge-plugin-1.0.3.zip"]);
    await rm(recordDir, { recursive: true });
    const verify = await runCli(["verify", "--config", ws.configFile]);
    expect(verify.code, verify.stdout + verify.stderr).toBe(0);
  });
});
