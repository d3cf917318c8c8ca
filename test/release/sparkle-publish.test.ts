import { execFileSync } from "node:child_process";
import { readFile, symlink } from "node:fs/promises";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../helpers/run-cli.js";
import { limit, pluginIn } from "../helpers/release-kit.js";
import { makeWorkspace, snapshotTree, type Workspace } from "../helpers/workspace.js";

type Plugin = { app: string; dmg: string; notes: string };

/** Python's xml.etree reads the appcast the store holds; each item as a dict of what Sparkle acts on. */
const PY_ITEMS = `
import json, sys, xml.etree.ElementTree as ET
U = "{http://www.andymatuschak.org/xml-namespaces/sparkle}"
out = []
for item in ET.parse(sys.argv[1]).getroot().find("channel").findall("item"):
    S = lambda n: item.find(U + n)
    crit = S("criticalUpdate")
    out.append({
        "short": S("shortVersionString").text, "build": S("version").text,
        "channel": None if S("channel") is None else S("channel").text,
        "critical": None if crit is None else crit.get(U + "version", ""),
        "phased": None if S("phasedRolloutInterval") is None else S("phasedRolloutInterval").text,
        "minAuto": None if S("minimumAutoupdateVersion") is None else S("minimumAutoupdateVersion").text,
        "notesLink": None if S("releaseNotesLink") is None else S("releaseNotesLink").text,
        "fullNotes": None if S("fullReleaseNotesLink") is None else S("fullReleaseNotesLink").text,
        "inline": item.find("description") is not None,
    })
print(json.dumps(out))
`;

// The refusals each leave the store as it was and run at once (each bundle in a folder of its own); the
// second describe has a store of its own and runs beside the first. At most three CLI runs at a time.
const slot = limit(3);

describe.concurrent("publish: Sparkle refusals and appcast options", () => {
  let ws: Workspace;
  const appcastFile = () => path.join(ws.storeDir, "releases", "appcast.xml");
  const items = () => JSON.parse(execFileSync("python3", ["-c", PY_ITEMS, appcastFile()]).toString()) as Array<Record<string, unknown>>;

  beforeAll(async () => {
    ws = await makeWorkspace({ appcast: { fullReleaseNotesUrl: "https://updates.example.com/notes/", phasedRolloutInterval: 86400, maxAppcastItems: 2 } });
    for (const [version, build] of [["1.0.0", 100], ["1.1.0", 110]] as const) {
      const res = await runCli(ws.publishArgs(await ws.plugin(version, build), version, ["--quiet"]));
      expect(res.code, res.stderr).toBe(0);
    }
  });

  const refused = (args: string[], exit: number, message: RegExp): Promise<void> => slot(async () => {
    const before = await snapshotTree(ws.storeDir);
    const res = await runCli(args);
    expect(res.code, res.stderr).toBe(exit);
    expect(res.stderr).toMatch(message);
    expect(res.stderr.split("\n").filter((l) => l.startsWith("relcast: error"))).toHaveLength(1);
    expect(res.stderr).toMatch(/^ {2}fix: \S/m);
    expect(res.stderr).not.toMatch(/\n\s+at /);
    expect(await snapshotTree(ws.storeDir)).toEqual(before);
  });

  it("refuses a backport whose build is above the higher release's, naming both", async () => {
    const p = await pluginIn(ws, "backport", "1.0.1", 115);
    await refused(ws.publishArgs(p, "1.0.1"), 5, /build order: 1\.0\.1 \(build 115\) has a higher build than 1\.1\.0 \(build 110\)[\s\S]*fix: .*above 100 \(1\.0\.0\) and below 110 \(1\.1\.0\)/);
  });

  it("refuses a build number another release already has", async () => {
    await refused(ws.publishArgs(await pluginIn(ws, "same-build", "1.2.0", 110), "1.2.0"), 5, /1\.1\.0 \(build 110\) and 1\.2\.0 \(build 110\) have the same build number/);
  });

  it("refuses a beta whose build is below a stable release its users also see", async () => {
    await refused(ws.publishArgs(await pluginIn(ws, "low-beta", "1.2.0-beta.1", 99), "1.2.0-beta.1", ["--channel", "beta"]), 5, /1\.1\.0 \(build 110\) has a higher build than 1\.2\.0-beta\.1 \(build 99, channel beta\)/);
  });

  it("refuses a channel name Sparkle would ignore", async () => {
    await refused(ws.publishArgs(await pluginIn(ws, "channel", "1.2.0", 120), "1.2.0", ["--channel", "be ta"]), 3, /field "channel" may hold only letters, digits/);
  });

  it.each<[string, string[], RegExp]>([
    ["--critical with a semver", ["--critical", "1.1.0"], /--critical "1\.1\.0" is not a build number/],
    ["--minimum-autoupdate-version above the release's build", ["--minimum-autoupdate-version", "999"], /--minimum-autoupdate-version 999 is above this release's own build 120/],
    ["--release-notes-url that is not http(s)", ["--release-notes-url", "ftp://x.example/n"], /--release-notes-url "ftp:\/\/x\.example\/n" is not an absolute http\(s\) URL/],
    ["--phased-rollout-interval that is not seconds", ["--phased-rollout-interval", "1d"], /--phased-rollout-interval "1d" is not a whole number of seconds/],
  ])("refuses %s (usage, exit 2)", async (name, flags, message) => {
    await refused(ws.publishArgs(await pluginIn(ws, name.replace(/\W+/g, "-"), "1.2.0", 120), "1.2.0", flags), 2, message);
  });

  it("refuses a bundle with a symlink that leaves it (checked on the bundle in preflight)", async () => {
    const p: Plugin = await ws.plugin("1.2.0", 120, { name: "Escaping" });
    await symlink("../../../../outside", path.join(p.app, "Contents", "Resources", "escape"));
    await refused(ws.publishArgs(p, "1.2.0"), 4, /symlink Escaping\.bundle\/Contents\/Resources\/escape -> \.\.\/\.\.\/\.\.\/\.\.\/outside climbs above the bundle/);
  });

  it("refuses a re-run of a published version with other appcast options", async () => {
    await refused(ws.publishArgs(await pluginIn(ws, "rerun", "1.1.0", 110), "1.1.0", ["--critical"]), 8, /1\.1\.0 is already published with other appcast options \(criticalUpdate\)/);
  });

  it.sequential("writes per-release options into the record and the appcast; config defaults fill the rest; maxAppcastItems keeps the 2 highest per channel", async () => {
    const backport = await runCli(ws.publishArgs(await ws.plugin("1.0.1", 105), "1.0.1", [
      "--critical", "100", "--minimum-autoupdate-version", "100", "--phased-rollout-interval", "0", "--release-notes-url", "https://updates.example.com/notes/{version}.html", "--json",
    ]));
    expect(backport.code, backport.stderr).toBe(0);
    expect(JSON.parse(backport.stdout).autoupdate).toMatchObject({
      buildNumber: 105, criticalUpdate: { version: "100" }, minimumAutoupdateVersion: "100",
      releaseNotesLink: "https://updates.example.com/notes/1.0.1.html", fullReleaseNotesLink: "https://updates.example.com/notes/",
    });
    expect(JSON.parse(backport.stdout).autoupdate.phasedRolloutInterval).toBeUndefined();
    const beta = await runCli(ws.publishArgs(await ws.plugin("1.2.0-beta.1", 115), "1.2.0-beta.1", ["--channel", "beta", "--critical", "--quiet"]));
    expect(beta.code, beta.stderr).toBe(0);

    const catalog = JSON.parse(await readFile(path.join(ws.storeDir, "releases", "catalog.json"), "utf8"));
    expect(catalog.count).toBe(4);
    expect(items()).toEqual([
      { short: "1.2.0-beta.1", build: "115", channel: "beta", critical: "", phased: "86400", minAuto: null, notesLink: null, fullNotes: "https://updates.example.com/notes/", inline: true },
      { short: "1.0.1", build: "105", channel: null, critical: "100", phased: null, minAuto: "100", notesLink: "https://updates.example.com/notes/1.0.1.html", fullNotes: "https://updates.example.com/notes/", inline: false },
      { short: "1.1.0", build: "110", channel: null, critical: null, phased: "86400", minAuto: null, notesLink: null, fullNotes: "https://updates.example.com/notes/", inline: true },
    ]);
  });

  it.sequential("relcast rebuild reproduces the same appcast bytes from the records", async () => {
    const before = await readFile(appcastFile(), "utf8");
    const res = await runCli(["rebuild", "--config", ws.configFile]);
    expect(res.code, res.stderr).toBe(0);
    expect(await readFile(appcastFile(), "utf8")).toBe(before);
  });

  it.sequential("relcast verify passes on this store (config gives maxAppcastItems)", async () => {
    const res = await runCli(["verify", "--config", ws.configFile, "--public-key", ws.key.publicKeyBase64]);
    expect(res.code, res.stdout + res.stderr).toBe(0);
    expect(res.stdout).toContain("4 release(s) verified, no problems");
  });
});

describe.concurrent("publish: a bundle without SUPublicEDKey", () => {
  it("warns that updated copies could not check later updates, names the key to add, and still publishes", () => slot(async () => {
    const ws = await makeWorkspace();
    const res = await runCli(ws.publishArgs(await ws.plugin("1.0.0", 100, { publicKey: null }), "1.0.0"));
    expect(res.code, res.stderr).toBe(0);
    expect(res.stderr).toMatch(/warning: the bundle's Info.plist has no SUPublicEDKey/);
    expect(res.stderr).toContain(`add SUPublicEDKey = ${ws.key.publicKeyBase64}`);
    const signed = await runCli(ws.publishArgs(await ws.plugin("1.1.0", 110), "1.1.0"));
    expect(signed.code, signed.stderr).toBe(0);
    expect(signed.stderr).not.toMatch(/SUPublicEDKey/);
  }));
});
