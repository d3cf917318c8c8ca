import "../helpers/python-without-shim.js"; // python3 and the aws cli without a version manager's shim (see there)
import { execFileSync } from "node:child_process";
import { cp, mkdir, mkdtemp, open, readFile, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { renderAppcast } from "../../src/domain/appcast.js";
import { appcastOptionsFor } from "../../src/domain/appcast.js";
import { loadConfig } from "../../src/config/load-config.js";
import { newKey } from "../helpers/workspace.js";
import { limit, pluginIn } from "../helpers/release-kit.js";
import { runCli as runCliNow } from "../helpers/run-cli.js";
import { makeWorkspace, type Workspace } from "../helpers/workspace.js";

/** Rewrites a bundle's Info.plist as a binary plist with Python's plistlib (an independent writer). */
const PY_TO_BINARY = `
import plistlib, sys
with open(sys.argv[1], "rb") as f: d = plistlib.load(f)
with open(sys.argv[1], "wb") as f: plistlib.dump(d, f, fmt=plistlib.FMT_BINARY)
`;

/** Python cryptography's verdict on each catalog release's edSignature over the stored zip: "<version> ok|bad". */
const PY_SIGNATURES = `
import base64, json, sys
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
store, pub = sys.argv[1], Ed25519PublicKey.from_public_bytes(base64.b64decode(sys.argv[2]))
for r in json.load(open(store + "/releases/catalog.json"))["versions"]:
    try:
        pub.verify(base64.b64decode(r["autoupdate"]["edSignature"]), open("%s/releases/%s/bridge-plugin-%s.zip" % (store, r["version"], r["version"]), "rb").read())
        print(r["version"], "ok")
    except InvalidSignature:
        print(r["version"], "bad")
`;

// The tests each work on a store copy of their own and run at the same time; at most three CLI runs of this file
// at once (each waits on its child). The publishes in beforeAll still run one after the other.
const slot = limit(3);
const runCli = (...args: Parameters<typeof runCliNow>) => slot(() => runCliNow(...args));

describe.concurrent("relcast verify on a folder store", () => {
  let ws: Workspace;
  let copies: string;
  let n = 0;
  const rel = (store: string, ...parts: string[]) => path.join(store, "releases", ...parts);

  beforeAll(async () => {
    ws = await makeWorkspace();
    copies = await mkdtemp(path.join(ws.dir, "copies-"));
    const releases: Array<[string, number, string[]]> = [["1.0.0", 100, []], ["1.1.0", 110, []], ["1.0.1", 105, []], ["1.2.0-beta.1", 115, ["--channel", "beta"]], ["1.1.1", 111, []]];
    for (const [version, build, flags] of releases) {
      const p = await ws.plugin(version, build);
      if (version === "1.1.1") execFileSync("python3", ["-c", PY_TO_BINARY, path.join(p.app, "Contents", "Info.plist")]);
      const res = await runCli(ws.publishArgs(p, version, [...flags, "--quiet"]));
      expect(res.code, res.stderr).toBe(0);
    }
  });

  /** A fresh copy of the good store to damage. */
  async function copyStore(): Promise<string> {
    const dir = path.join(copies, `store-${n++}`);
    await cp(ws.storeDir, dir, { recursive: true });
    return dir;
  }

  function pythonVerdicts(store: string): string[] {
    return execFileSync("python3", ["-c", PY_SIGNATURES, store, ws.key.publicKeyBase64]).toString().trim().split("\n");
  }

  function verify(store: string, extra: string[] = ["--public-key", ws.key.publicKeyBase64]) {
    return runCli(["verify", "--config", ws.configFile, "--store", `file://${store}`, ...extra]);
  }

  async function expectFailure(store: string, release: string, problem: RegExp): Promise<string> {
    const res = await verify(store);
    expect(res.code, res.stdout + res.stderr).toBe(11);
    expect(res.stdout).toMatch(problem);
    expect(res.stderr).toMatch(new RegExp(`relcast: error \\[E_VERIFY\\]: verify found problems in .*${release.replace(/\./g, "\\.")}`));
    const row = res.stdout.split("\n").find((l) => l.startsWith(`${release} `));
    expect(row, res.stdout).toMatch(/FAIL/);
    return res.stdout;
  }

  async function editJson(file: string, edit: (value: Record<string, any>) => void): Promise<void> {
    const value = JSON.parse(await readFile(file, "utf8"));
    edit(value);
    await writeFile(file, JSON.stringify(value, null, 2) + "\n");
  }

  it("passes a good store with a table of every release (binary Info.plist included)", async () => {
    const res = await verify(ws.storeDir);
    expect(res.code, res.stdout + res.stderr).toBe(0);
    const lines = res.stdout.split("\n");
    expect(lines[0]).toMatch(/^version\s+channel\s+build\s+record\s+dmg\s+zip\s+sig\s+plist\s+rules\s+deltas\s+appcast\s+order$/);
    expect(lines.slice(1, 6).map((l) => l.split(/\s+/).slice(0, 3).join(" "))).toEqual(["1.1.1 stable 111", "1.2.0-beta.1 beta 115", "1.0.1 stable 105", "1.1.0 stable 110", "1.0.0 stable 100"]);
    // No deltas in this store (the shared workspace makes none): that column is "-".
    for (const l of lines.slice(1, 6)) expect(l.split(/\s+/).slice(3)).toEqual(["ok", "ok", "ok", "ok", "ok", "ok", "-", "ok", "ok"]);
    expect(res.stdout).toContain("latest: 1.1.1 ok");
    expect(res.stdout).toContain("5 release(s) verified, no problems");
    expect(pythonVerdicts(ws.storeDir).every((l) => l.endsWith(" ok"))).toBe(true);
  });

  it("uses each archive's SUPublicEDKey without --public-key, works from --store alone, and prints JSON", async () => {
    const own = await verify(ws.storeDir, []);
    expect(own.code, own.stdout).toBe(0);
    const bare = await runCli(["verify", "--store", `file://${ws.storeDir}`, "--json"], { cwd: copies });
    expect(bare.code, bare.stdout + bare.stderr).toBe(0);
    const report = JSON.parse(bare.stdout);
    expect(report).toMatchObject({ ok: true, pluginId: "bridge-plugin", latest: { version: "1.1.1", problems: [] } });
    expect(report.releases).toHaveLength(5);
  });

  it("fails every signature against another public key", async () => {
    const res = await verify(ws.storeDir, ["--public-key", newKey().publicKeyBase64]);
    expect(res.code).toBe(11);
    expect(res.stdout.match(/edSignature does not verify/g)).toHaveLength(5);
    expect(res.stdout).toMatch(/1\.0\.0: Info\.plist SUPublicEDKey .* is not the public key being verified against/);
  });

  it("names the release whose zip holds wrong bytes (same size)", async () => {
    const store = await copyStore();
    const zip = rel(store, "1.0.1", "bridge-plugin-1.0.1.zip");
    const fh = await open(zip, "r+");
    await fh.write(Buffer.from("DAMAGED!"), 0, 8, 2000);
    await fh.close();
    const out = await expectFailure(store, "1.0.1", /1\.0\.1: update zip releases\/1\.0\.1\/bridge-plugin-1\.0\.1\.zip has SHA-256 \w+…, the record says/);
    expect(out).toMatch(/1\.0\.1: edSignature does not verify over the stored zip/);
    expect(out).not.toMatch(/^ {2}1\.1\.0:/m);
  });

  it("names the release whose disk image is missing", async () => {
    const store = await copyStore();
    await rm(rel(store, "1.1.0", "bridge-plugin-1.1.0.dmg"));
    await expectFailure(store, "1.1.0", /1\.1\.0: disk image releases\/1\.1\.0\/bridge-plugin-1\.1\.0\.dmg is missing/);
  });

  it("names the release whose signature is not its zip's (record, catalog and appcast all agree on it)", async () => {
    const store = await copyStore();
    const catalog = JSON.parse(await readFile(rel(store, "catalog.json"), "utf8"));
    const sig = (v: string) => catalog.versions.find((r: { version: string }) => r.version === v).autoupdate.edSignature as string;
    const [wrong, right] = [sig("1.0.0"), sig("1.1.0")];
    await editJson(rel(store, "catalog.json"), (c) => { c.versions.find((r: { version: string }) => r.version === "1.1.0").autoupdate.edSignature = wrong; });
    await editJson(rel(store, "1.1.0", "release.json"), (r) => { r.autoupdate.edSignature = wrong; });
    const appcast = await readFile(rel(store, "appcast.xml"), "utf8");
    await writeFile(rel(store, "appcast.xml"), appcast.replace(`sparkle:edSignature="${right}"`, `sparkle:edSignature="${wrong}"`));
    const out = await expectFailure(store, "1.1.0", /1\.1\.0: edSignature does not verify over the stored zip/);
    expect(pythonVerdicts(store).sort()).toEqual(["1.0.0 ok", "1.0.1 ok", "1.1.0 bad", "1.1.1 ok", "1.2.0-beta.1 ok"]);
    expect(out.split("\n").find((l) => l.startsWith("1.1.0 "))!.split(/\s+/).slice(3)).toEqual(["ok", "ok", "ok", "FAIL", "ok", "ok", "-", "ok", "ok"]);
  });

  it("names both releases of a build-order violation that two pipelines wrote past each other", async () => {
    const store = await copyStore();
    const side = path.join(copies, `side-${n++}`);
    const p = await pluginIn(ws, "v102", "1.0.2", 112);
    const pub = await runCli([...ws.publishArgs(p, "1.0.2"), "--store", `file://${side}`, "--quiet"]);
    expect(pub.code, pub.stderr).toBe(0);
    await mkdir(rel(store, "1.0.2"));
    await cp(rel(side, "1.0.2"), rel(store, "1.0.2"), { recursive: true });
    // What two publishes racing leave behind: each passed its build-order check before the other's record was in the
    // catalog, and each merged its record in (rebuild refuses such records, so the merge is done here as the race did it).
    const record = JSON.parse(await readFile(rel(store, "1.0.2", "release.json"), "utf8"));
    await editJson(rel(store, "catalog.json"), (c) => { c.versions.push(record); c.count += 1; });
    const out = await expectFailure(store, "1.0.2", /1\.0\.2: build order: 1\.0\.2 \(build 112\) has a higher build than 1\.1\.0 \(build 110\)/);
    expect(out).toMatch(/1\.1\.0: build order: 1\.0\.2 \(build 112\) has a higher build than 1\.1\.0 \(build 110\)/);
    expect(out).toMatch(/1\.0\.2 \(build 112\) has a higher build than 1\.1\.1 \(build 111\)/);
  });

  it("names the release whose archive's Info.plist does not carry the item's build", async () => {
    const store = await copyStore();
    const p = await pluginIn(ws, "v130", "1.3.0", 130);
    const plist = path.join(p.app, "Contents", "Info.plist");
    await writeFile(plist, (await readFile(plist, "utf8")).replace("<string>130</string>", "<string>130b</string>"));
    const pub = await runCli([...ws.publishArgs(p, "1.3.0", ["--build-number", "130"]), "--store", `file://${store}`]);
    expect(pub.code, pub.stderr).toBe(0);
    expect(pub.stderr).toMatch(/warning: CFBundleVersion "130b" is not 130/);
    await expectFailure(store, "1.3.0", /1\.3\.0: Info\.plist CFBundleVersion is "130b" but sparkle:version is "130"/);
  });

  it("names the release whose appcast item disagrees with the catalog", async () => {
    const store = await copyStore();
    const xml = await readFile(rel(store, "appcast.xml"), "utf8");
    const size = JSON.parse(await readFile(rel(store, "1.0.0", "release.json"), "utf8")).autoupdate.sizeBytes;
    const damaged = xml.replace(`plugin-1.0.0.zip" length="${size}"`, `plugin-1.0.0.zip" length="${size + 1}"`);
    expect(damaged).not.toBe(xml);
    await writeFile(rel(store, "appcast.xml"), damaged);
    await expectFailure(store, "1.0.0", new RegExp(`1\\.0\\.0: appcast enclosure length is "${size + 1}" but the catalog says "${size}"`));
  });

  it("tolerates a yanked release left out of the appcast, and fails one still offered", async () => {
    const store = await copyStore();
    // A yank made now, after every publish (a yank older than a later publish is not the last change, and the
    // public files one change back would never show it).
    const yankedAt = new Date().toISOString();
    await editJson(rel(store, "catalog.json"), (c) => {
      Object.assign(c.versions.find((r: { version: string }) => r.version === "1.0.1"), { yanked: true, yankedReason: "crashes on launch", yankedAt });
    });
    // As `relcast yank` leaves it: the marker beside the record, and the catalog entry marked.
    await writeFile(rel(store, "1.0.1/yank.json"), JSON.stringify({ yanked: true, yankedAt, yankedReason: "crashes on launch" }));
    const offeredStill = await expectFailure(store, "1.0.1", /1\.0\.1: the appcast offers 1\.0\.1 but it is yanked/);
    expect(offeredStill).toBeTruthy();
    const config = await loadConfig(ws.configFile);
    const catalog = JSON.parse(await readFile(rel(store, "catalog.json"), "utf8"));
    await writeFile(rel(store, "appcast.xml"), renderAppcast(catalog.versions, appcastOptionsFor(config)));
    const res = await verify(store);
    expect(res.code, res.stdout).toBe(0);
    expect(res.stdout.split("\n").find((l) => l.startsWith("1.0.1 "))).toMatch(/\byanked\s+ok$/);
  });

  it("fails on a publish killed between its latest and feeds steps, naming the release and the repair (issue 33)", async () => {
    const store = await copyStore();
    const p = await pluginIn(ws, "v140", "1.4.0", 140);
    const killed = await runCli([...ws.publishArgs(p, "1.4.0"), "--store", `file://${store}`], { env: { RELCAST_FAILPOINT: "before:feeds" } });
    expect(killed.signal).toBe("SIGKILL");
    const res = await verify(store);
    expect(res.code, res.stdout + res.stderr).toBe(11);
    expect(res.stdout).toContain("feed: release 1.4.0 has a record (releases/1.4.0/release.json) but the catalog does not list it");
    expect(res.stdout).toMatch(/warnings:\n {2}latest: latest\/ holds 1\.4\.0, which has a record but is not in the catalog yet/);
    const resumed = await runCli([...ws.publishArgs(p, "1.4.0"), "--store", `file://${store}`, "--quiet"]);
    expect(resumed.code, resumed.stderr).toBe(0);
    const after = await verify(store);
    expect(after.code, after.stdout).toBe(0);
    expect(after.stdout).not.toContain("warnings:");
    expect(after.stdout).toContain("latest: 1.4.0 ok");
  });

  it("fails on an empty or missing store (nothing to verify is never 'verified'), and reports a broken catalog as a feed problem", async () => {
    const empty = await mkdtemp(path.join(copies, "empty-"));
    for (const dir of [empty, path.join(copies, "no-such-store")]) {
      const none = await verify(dir);
      expect(none.code, none.stdout).toBe(11);
      expect(none.stdout).toMatch(/feed: file:\/\/.*releases\/catalog\.json does not exist: nothing is published in this store/);
      expect(none.stdout).not.toMatch(/release\(s\) verified/);
    }
    const store = await copyStore();
    await writeFile(rel(store, "catalog.json"), "{ broken");
    const broken = await verify(store);
    expect(broken.code).toBe(11);
    expect(broken.stdout).toMatch(/feed: the catalog .* is not valid JSON/);
    expect(broken.stderr).toMatch(/verify found problems in feed/);
  });
});
