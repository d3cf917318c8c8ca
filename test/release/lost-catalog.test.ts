import { execFileSync } from "node:child_process";
import { cp, mkdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../helpers/run-cli.js";
import { makeWorkspace, snapshotTree, type Workspace } from "../helpers/workspace.js";

/**
 * A store whose catalog was deleted but whose release records remain is not
 * an empty store (nor is one where other first publishes are running): a
 * publish checks against those records (build order) instead of announcing a
 * first release, and the catalog it creates lists them. A rebuild refuses
 * records whose builds rank against their versions.
 */
describe("a store that lost its catalog", () => {
  let ws: Workspace;
  beforeAll(async () => {
    ws = await makeWorkspace();
    for (const [v, b] of [["1.0.0", 100], ["1.1.0", 110]] as const) {
      const p = await ws.plugin(v, b);
      const res = await runCli(ws.publishArgs(p, v), { cwd: ws.dir });
      expect(res.code, res.stderr).toBe(0);
    }
    await rm(path.join(ws.storeDir, "releases/catalog.json"));
    await rm(path.join(ws.storeDir, "releases/catalog-index.json"), { force: true });
  });
  afterAll(async () => {
    await rm(ws.dir, { recursive: true, force: true });
  });

  it("publish checks the build order against the stored records: out of order is refused (E_VERSION) and writes nothing", async () => {
    const before = await snapshotTree(ws.storeDir);
    const p = await ws.plugin("1.2.0", 50);
    for (const extra of [["--dry-run"], []]) {
      const res = await runCli(ws.publishArgs(p, "1.2.0", extra), { cwd: ws.dir });
      expect(res.code, res.stderr).toBe(5);
      expect(res.stderr).toContain("[E_VERSION]");
      expect(res.stderr).toMatch(/has no catalog .*records of 2 release\(s\) \(1\.(0|1)\.0, 1\.(0|1)\.0\)/);
      expect(res.stderr).toMatch(/1\.2\.0 \(build 50\)/);
      expect(res.stderr).not.toContain("holds no releases yet");
    }
    expect(await snapshotTree(ws.storeDir)).toEqual(before);
  });

  it("a stored record that cannot be read is refused (E_STORE) before anything is written: the catalog would leave it out", async () => {
    const broken = path.join(ws.storeDir, "releases/1.0.5");
    await mkdir(broken);
    await writeFile(path.join(broken, "release.json"), "{ not json");
    const before = await snapshotTree(ws.storeDir);
    const p = await ws.plugin("1.2.0", 120);
    const res = await runCli(ws.publishArgs(p, "1.2.0"), { cwd: ws.dir });
    expect(res.code, res.stderr).toBe(9);
    expect(res.stderr).toContain("[E_STORE]");
    expect(res.stderr).toMatch(/releases\/1\.0\.5\/release\.json \(not JSON/);
    expect(res.stderr).toContain("relcast rebuild");
    expect(await snapshotTree(ws.storeDir)).toEqual(before);
    await rm(broken, { recursive: true });
  });

  it("rebuild refuses records whose build numbers rank against their versions, and writes nothing", async () => {
    // 1.2.0 with build 50 published elsewhere (as the old code let it be published here) and its folder copied in.
    const p50 = await ws.plugin("1.2.0", 50);
    const other = await runCli(ws.publishArgs(p50, "1.2.0", ["--store", "file://./other-store"]), { cwd: ws.dir });
    expect(other.code, other.stderr).toBe(0);
    await cp(path.join(ws.dir, "other-store/releases/1.2.0"), path.join(ws.storeDir, "releases/1.2.0"), { recursive: true });
    const before = await snapshotTree(ws.storeDir);
    for (const extra of [["--dry-run"], []]) {
      const res = await runCli(["rebuild", "--config", ws.configFile, "--key-file", ws.keyFile, ...extra], { cwd: ws.dir });
      expect(res.code, res.stderr).toBe(5);
      expect(res.stderr).toContain("[E_VERSION]");
      expect(res.stderr).toMatch(/1\.2\.0 \(build 50\)/);
    }
    expect(await snapshotTree(ws.storeDir)).toEqual(before);
    // Without the out-of-order record the rebuild restores the catalog, and publish works again.
    await rm(path.join(ws.storeDir, "releases/1.2.0"), { recursive: true });
    const ok = await runCli(["rebuild", "--config", ws.configFile, "--key-file", ws.keyFile], { cwd: ws.dir });
    expect(ok.code, ok.stderr).toBe(0);
    const p = await ws.plugin("1.2.0", 120);
    const pub = await runCli(ws.publishArgs(p, "1.2.0"), { cwd: ws.dir });
    expect(pub.code, pub.stderr).toBe(0);
    const catalog = JSON.parse(await readFile(path.join(ws.storeDir, "releases/catalog.json"), "utf8"));
    expect(catalog.versions.map((r: { version: string }) => r.version).sort()).toEqual(["1.0.0", "1.1.0", "1.2.0"]);
  });

  it("a stored record whose zip is gone (a half-copied store) is refused (E_STORE) before anything is written: the feeds would offer a missing download", async () => {
    await rm(path.join(ws.storeDir, "releases/catalog.json"));
    await rm(path.join(ws.storeDir, "releases/catalog-index.json"), { force: true });
    const zip = path.join(ws.storeDir, "releases/1.0.0/bridge-plugin-1.0.0.zip");
    await rename(zip, `${zip}.away`);
    const before = await snapshotTree(ws.storeDir);
    const p = await ws.plugin("1.3.0", 130);
    const res = await runCli(ws.publishArgs(p, "1.3.0"), { cwd: ws.dir });
    expect(res.code, res.stderr).toBe(9);
    expect(res.stderr).toContain("[E_STORE]");
    expect(res.stderr).toContain("releases/1.0.0/bridge-plugin-1.0.0.zip");
    expect(await snapshotTree(ws.storeDir)).toEqual(before);
    await rename(`${zip}.away`, zip);
  });

  it("a publish into it lists every stored record in the catalog it creates, and says so; verify accepts the store", async () => {
    const p = await ws.plugin("1.3.0", 130);
    const res = await runCli(ws.publishArgs(p, "1.3.0"), { cwd: ws.dir });
    expect(res.code, res.stderr).toBe(0);
    expect(res.stderr).toMatch(/has no catalog \(releases\/catalog\.json\) but holds the records of 3 release\(s\)/);
    expect(res.stderr).not.toContain("holds no releases yet");
    const catalog = JSON.parse(await readFile(path.join(ws.storeDir, "releases/catalog.json"), "utf8"));
    expect(catalog.versions.map((r: { version: string }) => r.version)).toEqual(["1.3.0", "1.2.0", "1.1.0", "1.0.0"]);
    const items = execFileSync("python3", ["-c", "import sys,xml.etree.ElementTree as E;print(' '.join(i.find('title').text for i in E.parse(sys.argv[1]).getroot().find('channel').findall('item')))", path.join(ws.storeDir, "releases/appcast.xml")], { encoding: "utf8" });
    expect(items).toMatch(/1\.3\.0.*1\.2\.0.*1\.1\.0.*1\.0\.0/);
    const verify = await runCli(["verify", "--config", ws.configFile, "--public-key", ws.key.publicKeyBase64], { cwd: ws.dir });
    expect(verify.code, verify.stderr + verify.stdout).toBe(0);
  });
});
