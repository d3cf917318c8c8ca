import { cp, readFile, rm } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../helpers/run-cli.js";
import { makeWorkspace, snapshotTree, type Workspace } from "../helpers/workspace.js";

/**
 * A store whose catalog was deleted but whose release records remain is not
 * an empty store: publish refuses (pointing at `relcast rebuild`) instead of
 * announcing a first release and skipping the build-order check, and a
 * rebuild refuses records whose builds rank against their versions.
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

  it("publish refuses with E_STORE, names the records and relcast rebuild, and writes nothing", async () => {
    const before = await snapshotTree(ws.storeDir);
    const p = await ws.plugin("1.2.0", 50);
    for (const extra of [["--dry-run"], []]) {
      const res = await runCli(ws.publishArgs(p, "1.2.0", extra), { cwd: ws.dir });
      expect(res.code, res.stderr).toBe(9);
      expect(res.stderr).toContain("[E_STORE]");
      expect(res.stderr).toMatch(/has no catalog .*1\.0\.0/);
      expect(res.stderr).toContain("relcast rebuild");
      expect(res.stderr).not.toContain("holds no releases yet");
    }
    expect(await snapshotTree(ws.storeDir)).toEqual(before);
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
});
