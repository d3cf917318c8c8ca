import "../helpers/python-without-shim.js"; // python3 and the aws cli without a version manager's shim (see there)
import { execFileSync } from "node:child_process";
import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { motoUnavailableReason, startMotoServer, type MotoServer } from "../helpers/moto-server.js";
import { DEMO_RELEASES, publishDemoReleases, storeWorkspace } from "../helpers/published-store.js";
import { runCli } from "../helpers/run-cli.js";
import { snapshotTree, type Workspace } from "../helpers/workspace.js";

/** Versions in the appcast, read by Python's xml.etree (an independent parser). */
function appcastVersions(file: string): string[] {
  const py = "import sys,xml.etree.ElementTree as E\nns='{http://www.andymatuschak.org/xml-namespaces/sparkle}'\nfor i in E.parse(sys.argv[1]).getroot().find('channel').findall('item'): print(i.find(ns+'shortVersionString').text)";
  return execFileSync("python3", ["-c", py, file]).toString().trim().split("\n").filter(Boolean);
}

async function catalogOf(ws: Workspace): Promise<Array<Record<string, any>>> {
  return JSON.parse(await readFile(path.join(ws.storeDir, "releases", "catalog.json"), "utf8")).versions;
}

const latestDir = (ws: Workspace) => readdir(path.join(ws.storeDir, "releases", "latest")).then((n) => n.sort());
const cli = (ws: Workspace, ...args: string[]) => runCli([...args, "--config", ws.configFile]);

describe("relcast yank / unyank on a folder store", () => {
  let ws: Workspace;
  beforeAll(async () => {
    ws = await storeWorkspace();
    await publishDemoReleases(ws);
  });

  it("yank takes the version out of both appcasts and latest, marks it in the catalog, keeps every artifact", async () => {
    const res = await cli(ws, "yank", "v1.2.0", "--reason", "crashes on launch on macOS 12");
    expect(res.code, res.stderr).toBe(0);
    expect(res.stderr).toContain("yanked 1.2.0; latest is 1.1.0");
    expect(appcastVersions(path.join(ws.storeDir, "releases", "appcast.xml"))).toEqual(["1.1.0", "1.0.0"]);
    expect(appcastVersions(path.join(ws.storeDir, "api/v1/plugins/bridge-plugin/appcast.xml"))).toEqual(["1.1.0", "1.0.0"]);
    const entry = (await catalogOf(ws)).find((r) => r.version === "1.2.0")!;
    expect(entry).toMatchObject({ yanked: true, yankedReason: "crashes on launch on macOS 12" });
    expect(new Date(entry.yankedAt).toISOString()).toBe(entry.yankedAt);
    expect(await latestDir(ws)).toEqual(["bridge-plugin-1.1.0.dmg", "bridge-plugin-1.1.0.zip"]);
    expect(JSON.parse(await readFile(path.join(ws.storeDir, "downloads/bridge-plugin-latest.json"), "utf8")).version).toBe("1.1.0");
    expect(await readdir(path.join(ws.storeDir, "releases", "1.2.0"))).toEqual(expect.arrayContaining(["bridge-plugin-1.2.0.dmg", "bridge-plugin-1.2.0.zip", "release.json", "yank.json"]));
    expect(await readFile(path.join(ws.storeDir, "index.html"), "utf8")).toMatch(/Version 1\.2\.0 <span class="badge yanked">yanked<\/span>/);
    const verify = await cli(ws, "verify");
    expect(verify.code, verify.stdout + verify.stderr).toBe(0);
  });

  it("a re-run of the yanked version's publish and a rebuild keep it yanked", async () => {
    const p = await ws.plugin("1.2.0", 120);
    const again = await runCli(ws.publishArgs(p, "1.2.0", ["--published-at", "2026-11-01T09:00:00.000Z"]));
    expect(again.code, again.stderr).toBe(0);
    expect(await latestDir(ws)).toEqual(["bridge-plugin-1.1.0.dmg", "bridge-plugin-1.1.0.zip"]);
    const rebuilt = await cli(ws, "rebuild");
    expect(rebuilt.code, rebuilt.stderr).toBe(0);
    expect((await catalogOf(ws)).find((r) => r.version === "1.2.0")).toMatchObject({ yanked: true, yankedReason: "crashes on launch on macOS 12" });
    expect(appcastVersions(path.join(ws.storeDir, "releases", "appcast.xml"))).toEqual(["1.1.0", "1.0.0"]);
  });

  it("refuses an unknown version, a second yank and unyanking what is not yanked, writing nothing", async () => {
    const before = await snapshotTree(ws.storeDir);
    const unknown = await cli(ws, "yank", "9.9.9");
    expect(unknown.code).toBe(5);
    expect(unknown.stderr).toContain("version 9.9.9 is not in the catalog");
    const twice = await cli(ws, "yank", "1.2.0");
    expect(twice.code).toBe(8);
    expect(twice.stderr).toContain("already yanked");
    const notYanked = await cli(ws, "unyank", "1.0.0");
    expect(notYanked.code).toBe(8);
    const badVersion = await cli(ws, "yank", "1.2");
    expect(badVersion.code).toBe(5);
    const badReason = await cli(ws, "yank", "1.1.0", "--reason", "two\nlines");
    expect(badReason.code).toBe(2);
    // A right-to-left override would show the reason reordered on the downloads page and in the catalog.
    const bidiReason = await cli(ws, "yank", "1.1.0", "--reason", "crashes \u202Eon launch");
    expect(bidiReason.code).toBe(4);
    expect(bidiReason.stderr).toMatch(/--reason: character U\+202E \(RIGHT-TO-LEFT OVERRIDE\) at position 9/);
    for (const r of [unknown, twice, notYanked, badVersion, badReason, bidiReason]) expect(r.stderr).not.toMatch(/\n\s+at /);
    expect(await snapshotTree(ws.storeDir)).toEqual(before);
  });

  it("unyank offers it again and makes it latest again", async () => {
    const res = await cli(ws, "unyank", "1.2.0");
    expect(res.code, res.stderr).toBe(0);
    expect(appcastVersions(path.join(ws.storeDir, "releases", "appcast.xml"))).toEqual(["1.2.0", "1.1.0", "1.0.0"]);
    expect((await catalogOf(ws)).find((r) => r.version === "1.2.0")!.yanked).toBeUndefined();
    expect(await latestDir(ws)).toEqual(["bridge-plugin-1.2.0.dmg", "bridge-plugin-1.2.0.zip"]);
    expect(await readdir(path.join(ws.storeDir, "releases", "1.2.0"))).not.toContain("yank.json");
    expect((await cli(ws, "verify")).code).toBe(0);
  });

  it("a yank racing four publishes loses nothing: every release listed, the yanked one out, latest the highest other", async () => {
    const versions = ["1.3.0", "1.4.0", "1.5.0", "1.6.0"];
    const plugins = await Promise.all(versions.map((v, i) => ws.plugin(v, 130 + i * 10)));
    const results = await Promise.all([
      cli(ws, "yank", "1.2.0", "--reason", "race"),
      ...versions.map((v, i) => runCli(ws.publishArgs(plugins[i]!, v, ["--quiet"]))),
    ]);
    for (const r of results) expect(r.code, r.stderr).toBe(0);
    const catalog = await catalogOf(ws);
    expect(catalog.map((r) => r.version).sort()).toEqual(["1.0.0", "1.1.0", "1.2.0", "1.3.0", "1.4.0", "1.5.0", "1.6.0"]);
    expect(catalog.find((r) => r.version === "1.2.0")!.yanked).toBe(true);
    expect(appcastVersions(path.join(ws.storeDir, "releases", "appcast.xml")).sort()).toEqual(["1.0.0", "1.1.0", "1.3.0", "1.4.0", "1.5.0", "1.6.0"]);
    expect(await latestDir(ws)).toEqual(["bridge-plugin-1.6.0.dmg", "bridge-plugin-1.6.0.zip"]);
    const verify = await cli(ws, "verify");
    expect(verify.code, verify.stdout).toBe(0);
  });
});

const motoReason = motoUnavailableReason();

/**
 * The S3 scenario's moto server and its two publishes, started when the file starts (a file-level beforeAll that
 * does not wait for them), so they run while the folder tests above run instead of after them. Its test awaits it.
 */
let s3Ready: Promise<{ moto: MotoServer; ws: Workspace }> | undefined;
beforeAll(() => {
  if (motoReason) return;
  s3Ready = (async () => {
    const moto = await startMotoServer();
    const ws = await storeWorkspace(moto);
    // The two newest demo releases: yanking the newer moves latest back to the older (the folder store above has the third).
    for (const r of DEMO_RELEASES.slice(1)) {
      const res = await runCli(ws.publishArgs(await ws.plugin(r.version, r.build), r.version, ["--published-at", r.at]));
      expect(res.code, res.stderr).toBe(0);
    }
    return { moto, ws };
  })();
  // Failures are reported by the test that awaits it; this only keeps an early one from being an unhandled rejection.
  s3Ready.catch(() => {});
});
afterAll(async () => {
  await (await s3Ready?.catch(() => undefined))?.moto.stop();
});

describe.skipIf(Boolean(motoReason))(`relcast yank on an S3 store (moto)${motoReason ? ` — skipped: ${motoReason}` : ""}`, () => {
  it("moves latest back and out of the appcast, and unyank restores it; verify passes after each", async () => {
    const { ws } = await s3Ready!;
    expect((await cli(ws, "yank", "1.2.0")).code).toBe(0);
    const afterYank = await cli(ws, "verify", "--json");
    expect(afterYank.code, afterYank.stdout).toBe(0);
    expect(JSON.parse(afterYank.stdout).latest.version).toBe("1.1.0");
    expect((await cli(ws, "unyank", "1.2.0")).code).toBe(0);
    const afterUnyank = await cli(ws, "verify", "--json");
    expect(afterUnyank.code).toBe(0);
    expect(JSON.parse(afterUnyank.stdout).latest.version).toBe("1.2.0");
  });
});
