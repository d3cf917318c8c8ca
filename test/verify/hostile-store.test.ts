import { execFileSync, spawnSync } from "node:child_process";
import { cp, mkdir, mkdtemp, readFile, readdir, rm, stat, symlink, writeFile, access } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { limit, pluginIn } from "../helpers/release-kit.js";
import { runCli as runCliNow } from "../helpers/run-cli.js";
import { startServe } from "../helpers/serve-process.js";
import { walkFiles } from "../helpers/walk-files.js";
import { makeWorkspace, snapshotTree, type Workspace } from "../helpers/workspace.js";

/** Python's expat (through xml.etree): an XML 1.0 parser relcast did not write. Prints "ok" or the error. */
const PY_PARSE = `
import sys, xml.etree.ElementTree as ET
try:
    ET.parse(sys.argv[1]); print("ok")
except ET.ParseError as e:
    print("error", e)
`;
const expat = (file: string) => execFileSync("python3", ["-c", PY_PARSE, file]).toString().trim();
const sha256sum = (file: string) => execFileSync("sha256sum", [file]).toString().split(" ")[0]!;
const curl = (url: string) => {
  const res = spawnSync("curl", ["-s", "-o", "-", "-w", "\n%{http_code}", url], { encoding: "utf8" });
  const lines = res.stdout.split("\n");
  return { status: Number(lines.pop()), body: lines.join("\n") };
};
const exists = (f: string) => access(f).then(() => true, () => false);

// The tests each work on a store copy of their own and run at the same time; at most three CLI runs of this file
// at once (each waits on its child). The publishes in beforeAll still run one after the other.
const slot = limit(3);
const runCli = (...args: Parameters<typeof runCliNow>) => slot(() => runCliNow(...args));

describe.concurrent("verify, serve, site and publish against a store someone tampered with", () => {
  let ws: Workspace;
  let copies: string;
  let n = 0;
  const SECRET = "SECRET-OUTSIDE-THE-STORE";
  let outsideFile: string;

  beforeAll(async () => {
    ws = await makeWorkspace();
    copies = await mkdtemp(path.join(ws.dir, "copies-"));
    for (const [version, build] of [["1.0.0", 100], ["1.1.0", 110]] as const) {
      const res = await runCli(ws.publishArgs(await ws.plugin(version, build), version, ["--quiet"]));
      expect(res.code, res.stderr).toBe(0);
    }
    outsideFile = path.join(ws.dir, "outside.txt");
    await writeFile(outsideFile, `${SECRET}\n`);
  });
  afterAll(async () => {
    await rm(ws.dir, { recursive: true, force: true });
  });

  async function copyStore(): Promise<string> {
    const dir = path.join(copies, `store-${n++}`);
    await cp(ws.storeDir, dir, { recursive: true, verbatimSymlinks: true });
    return dir;
  }
  const verify = (store: string, env: NodeJS.ProcessEnv = {}) => runCli(["verify", "--config", ws.configFile, "--store", `file://${store}`], { env });
  const catalogOf = async (store: string) => JSON.parse(await readFile(path.join(store, "releases", "catalog.json"), "utf8"));

  it("hashes every object a public URL names and prints how many objects and bytes it checked", async () => {
    const res = await verify(ws.storeDir);
    expect(res.code, res.stdout + res.stderr).toBe(0);
    // Counted independently: every .dmg/.zip under releases/ (versioned and latest copies) and downloads/.
    let objects = 0;
    let bytes = 0;
    for await (const file of walkFiles(ws.storeDir)) {
      const rel = path.relative(ws.storeDir, file);
      if (/^(releases|downloads)\/.*\.(dmg|zip)$/.test(rel)) {
        objects++;
        bytes += (await stat(file)).size;
      }
    }
    expect(objects).toBe(2 * 4 + 2 + 2);
    expect(res.stdout).toContain(`checked ${objects} object(s), ${bytes} bytes: SHA-256 and size compared with the records`);
  });

  it.each([
    ["downloads/bridge-plugin-1.0.0.dmg", "1.0.0", "sha256"],
    ["downloads/bridge-plugin-1.1.0.zip", "1.1.0", "zip"],
    ["downloads/bridge-plugin-latest.dmg", "1.1.0", "sha256"],
    ["downloads/bridge-plugin-latest.zip", "1.1.0", "zip"],
  ])("a public copy %s with the same size but other bytes fails verify (sha256sum agrees it differs)", async (key, version, which) => {
    const store = await copyStore();
    const file = path.join(store, key);
    const good = await readFile(file);
    const record = (await catalogOf(store)).versions.find((r: any) => r.version === version);
    const pinned = which === "zip" ? record.autoupdate.sha256 : record.sha256;
    expect(sha256sum(file)).toBe(pinned);
    const bad = Buffer.from(good);
    const mid = Math.floor(bad.length / 2);
    bad[mid] = bad[mid]! ^ 0xff;
    await writeFile(file, bad);
    expect(sha256sum(file)).not.toBe(pinned);
    const res = await verify(store);
    expect(res.code, res.stdout).toBe(11);
    expect(res.stdout).toMatch(new RegExp(`site: ${key.replace(/\./g, "\\.")} has SHA-256 [0-9a-f]{12}…; .* says ${pinned.slice(0, 12)}…`));
  });

  it("--json shows a format character from a tampered page as a JSON escape, never raw, and parses back to it", async () => {
    const store = await copyStore();
    const page = path.join(store, "changelog.html");
    await writeFile(page, (await readFile(page, "utf8")).replace("Version 1.1.0", "Version \u202E0.1.1"));
    const res = await runCli(["verify", "--json", "--config", ws.configFile, "--store", `file://${store}`]);
    expect(res.code).toBe(11);
    expect(res.stdout).not.toMatch(/[\p{Cf}\u2028\u2029\x7f-\x9f]/u);
    expect(res.stdout).toContain("\\u202E0.1.1");
    const report = JSON.parse(res.stdout);
    expect(JSON.stringify(report)).toContain("\u202E0.1.1");
  });

  it("fails on an appcast with a control character that a lenient parser accepts; expat agrees it does not parse", async () => {
    const store = await copyStore();
    for (const key of ["releases/appcast.xml", "api/v1/plugins/bridge-plugin/appcast.xml"]) {
      const file = path.join(store, key);
      const xml = await readFile(file, "utf8");
      await writeFile(file, xml.replace("<![CDATA[", "<![CDATA[\x1b[31m"));
      expect(expat(file)).toMatch(/^error .*not well-formed \(invalid token\)/);
    }
    const res = await verify(store);
    expect(res.code, res.stdout).toBe(11);
    expect(res.stdout).toMatch(/feed: releases\/appcast\.xml is not well-formed XML 1\.0 \(.*disallowed character/);
    expect(res.stdout).toMatch(/site: api\/v1\/plugins\/bridge-plugin\/appcast\.xml is not well-formed XML 1\.0/);
  });

  it("a catalog entry with text feeds cannot hold is refused on read by verify and publish", async () => {
    const store = await copyStore();
    const catalog = await catalogOf(store);
    catalog.versions[0].summary = "evil \u001b[31m summary";
    await writeFile(path.join(store, "releases", "catalog.json"), JSON.stringify(catalog, null, 2));
    const res = await verify(store);
    expect(res.code, res.stdout).toBe(11);
    expect(res.stdout).toMatch(/versions\.0\.summary has a character feeds cannot hold \(line 1, column 6: character U\+001B/);
    const before = await snapshotTree(store);
    const pub = await runCli([...ws.publishArgs(await pluginIn(ws, "refused-read", "1.2.0", 120), "1.2.0"), "--store", `file://${store}`]);
    expect(pub.code, pub.stderr).toBe(12);
    expect(await snapshotTree(store)).toEqual(before);
  });

  it.each([
    ["../victim", "versions.0.version"],
    ["1.1.0/../../../victim", "versions.0.version"],
  ])("a record version %s never becomes a path: verify deletes nothing outside its temp folder", async (version) => {
    const store = await copyStore();
    const tmp = await mkdtemp(path.join(ws.dir, "tmpdir-"));
    const victim = path.join(tmp, "victim.zip");
    await writeFile(victim, "must survive");
    const catalog = await catalogOf(store);
    const r = catalog.versions[0];
    const old = r.version;
    r.version = version;
    r.objectStore.objectPath = `releases/${version}/${r.objectStore.artifactFileName}`;
    await writeFile(path.join(store, "releases", "catalog.json"), JSON.stringify(catalog, null, 2));
    await mkdir(path.join(store, "releases", old, "x"), { recursive: true });
    const res = await verify(store, { TMPDIR: tmp });
    expect(res.code, res.stdout + res.stderr).toBe(11);
    expect(res.stdout).toMatch(/versions\.0\.version must be a semantic version/);
    expect(await readFile(victim, "utf8")).toBe("must survive");
    expect((await readdir(tmp)).sort()).toEqual(["victim.zip"]);
  });

  it("an objectPath that names another object than releases/<version>/<file> is refused", async () => {
    const store = await copyStore();
    const catalog = await catalogOf(store);
    catalog.versions[0].objectStore.objectPath = "releases/1.0.0/bridge-plugin-1.0.0.dmg";
    await writeFile(path.join(store, "releases", "catalog.json"), JSON.stringify(catalog, null, 2));
    const res = await verify(store);
    expect(res.code).toBe(11);
    expect(res.stdout).toMatch(/versions\.0\.objectStore\.objectPath must be releases\/<version>\/<artifactFileName>/);
  });

  describe("symbolic links planted in a folder store", () => {
    let store: string;
    const stop: Array<() => Promise<void>> = [];
    afterAll(async () => {
      for (const s of stop) await s();
    });

    beforeAll(async () => {
      store = await copyStore();
      await symlink("/etc/passwd", path.join(store, "downloads", "passwd.dmg"));
      await symlink(outsideFile, path.join(store, "downloads", "outside.zip"));
      await symlink(path.dirname(outsideFile), path.join(store, "downloads", "dir"));
      // A versioned object replaced by a link to a copy of its own bytes outside the store.
      const dmg = path.join(store, "releases", "1.0.0", "bridge-plugin-1.0.0.dmg");
      const outsideCopy = path.join(ws.dir, "outside-copy.dmg");
      await cp(dmg, outsideCopy);
      await rm(dmg);
      await symlink(outsideCopy, dmg);
    });

    it("serve answers 404 for every link (checked with curl)", async () => {
      const server = await startServe(["--config", ws.configFile, "--store", `file://${store}`]);
      stop.push(server.stop);
      for (const target of ["/downloads/passwd.dmg", "/downloads/outside.zip", "/downloads/dir/outside.txt", "/releases/1.0.0/bridge-plugin-1.0.0.dmg"]) {
        const res = curl(server.base + target);
        expect(res.status, target).toBe(404);
        expect(res.body).not.toContain(SECRET);
        expect(res.body).not.toContain("root:");
      }
      expect(curl(`${server.base}/downloads/bridge-plugin-1.1.0.dmg`).status).toBe(200);
    });

    it("verify names every link as a problem and treats the linked object as missing", async () => {
      const res = await verify(store);
      expect(res.code, res.stdout).toBe(11);
      expect(res.stdout).toMatch(/store: downloads\/passwd\.dmg is a symbolic link \(to \/etc\/passwd\)/);
      expect(res.stdout).toMatch(/store: downloads\/dir is a symbolic link/);
      expect(res.stdout).toMatch(/store: releases\/1\.0\.0\/bridge-plugin-1\.0\.0\.dmg is a symbolic link/);
      expect(res.stdout).toMatch(/1\.0\.0: disk image releases\/1\.0\.0\/bridge-plugin-1\.0\.0\.dmg is missing/);
    });

    it("site build copies nothing through a link", async () => {
      const out = path.join(copies, `site-${n++}`);
      await runCli(["site", "build", "--config", ws.configFile, "--store", `file://${store}`, "--out", out]);
      for await (const file of walkFiles(out)) {
        expect((await readFile(file)).includes(SECRET), file).toBe(false);
      }
      expect(await exists(path.join(out, "downloads", "passwd.dmg"))).toBe(false);
    });

    it("publish refuses a store with a link where it writes, before writing anything", async () => {
      const s = await copyStore();
      const outside = await mkdtemp(path.join(ws.dir, "outside-downloads-"));
      await cp(path.join(s, "downloads"), outside, { recursive: true });
      await rm(path.join(s, "downloads"), { recursive: true });
      await symlink(outside, path.join(s, "downloads"));
      // (walkFiles would read the link as a file: snapshot the real folders.)
      const before = await snapshotTree(path.join(s, "releases"));
      const outsideBefore = await snapshotTree(outside);
      const res = await runCli([...ws.publishArgs(await pluginIn(ws, "refused-link", "1.2.0", 120), "1.2.0"), "--store", `file://${s}`]);
      expect(res.code, res.stderr).toBe(9);
      expect(res.stderr).toMatch(/E_STORE\]: the store holds what relcast never writes: downloads is a symbolic link/);
      expect(await snapshotTree(path.join(s, "releases"))).toEqual(before);
      expect(await snapshotTree(outside)).toEqual(outsideBefore);
    });

    it("gc removes a stale temp link itself, never what it points at, and never walks into a linked folder", async () => {
      const s = await copyStore();
      const outside = await mkdtemp(path.join(ws.dir, "outside-gc-"));
      const victim = path.join(outside, ".relcast-tmp-1-victim");
      await writeFile(victim, "keep me");
      await symlink(victim, path.join(s, "releases", ".relcast-tmp-2-link"));
      await symlink(outside, path.join(s, "releases", "9.9.9"));
      const res = await runCli(["gc", "--config", ws.configFile, "--store", `file://${s}`, "--older-than", "0"]);
      expect(res.code, res.stderr).toBe(0);
      expect(await readFile(victim, "utf8")).toBe("keep me");
      expect(await exists(path.join(s, "releases", ".relcast-tmp-2-link"))).toBe(false);
    });
  });
});

