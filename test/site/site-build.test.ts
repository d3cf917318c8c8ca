import "../helpers/python-without-shim.js"; // python3 and the aws cli without a version manager's shim (see there)
import { createHash } from "node:crypto";
import { mkdtemp, readdir, readFile, rm, symlink } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { motoUnavailableReason, startMotoServer, type MotoServer } from "../helpers/moto-server.js";
import { publishDemoReleases, storeWorkspace } from "../helpers/published-store.js";
import { runCli } from "../helpers/run-cli.js";
import { startServe } from "../helpers/serve-process.js";
import { cloneWorkspace } from "../helpers/clone-workspace.js";
import type { Workspace } from "../helpers/workspace.js";

async function files(root: string, dir = ""): Promise<string[]> {
  const out: string[] = [];
  for (const e of await readdir(path.join(root, dir), { withFileTypes: true })) {
    const rel = dir ? `${dir}/${e.name}` : e.name;
    if (e.isDirectory()) out.push(...(await files(root, rel)));
    else out.push(rel);
  }
  return out.sort();
}

const PUBLIC_FILES = [
  "api/v1/plugins/bridge-plugin/appcast.xml", "api/v1/plugins/bridge-plugin/releases.json", "changelog.html",
  ...["1.0.0", "1.1.0", "1.2.0"].flatMap((v) => [`downloads/bridge-plugin-${v}.dmg`, `downloads/bridge-plugin-${v}.zip`]),
  "downloads/bridge-plugin-latest.dmg", "downloads/bridge-plugin-latest.json", "downloads/bridge-plugin-latest.zip", "index.html",
].sort();

const motoReason = motoUnavailableReason();

/**
 * The S3 test's moto server and its demo publishes, started when the file starts (a file-level beforeAll that does
 * not wait for them), so they run while the folder tests run instead of after them. Its test awaits it.
 */
let s3Ready: Promise<{ moto: MotoServer; ws: Workspace; records: Array<Record<string, any>> }> | undefined;
beforeAll(() => {
  if (motoReason) return;
  s3Ready = (async () => {
    const moto = await startMotoServer();
    const ws = await storeWorkspace(moto);
    return { moto, ws, records: await publishDemoReleases(ws) };
  })();
  // Failures are reported by the test that awaits it; this only keeps an early one from being an unhandled rejection.
  s3Ready.catch(() => {});
});
afterAll(async () => {
  await (await s3Ready?.catch(() => undefined))?.moto.stop();
});

// The demo releases published once into a folder store; each folder test works on its own copy of that workspace.
let published: { ws: Workspace; records: Array<Record<string, any>> };
beforeAll(async () => {
  const ws = await storeWorkspace();
  published = { ws, records: await publishDemoReleases(ws) };
});

describe.concurrent("relcast site sync on an older folder store", () => {
  it("an old store (no public files) gets a verify warning; site sync writes the public site; a missing download is a problem", async () => {
    const ws = await cloneWorkspace(published.ws);
    const { records } = published;
    for (const dir of ["api", "downloads", "index.html", "changelog.html"]) await rm(path.join(ws.storeDir, dir), { recursive: true, force: true });
    const before = await runCli(["verify", "--config", ws.configFile]);
    expect(before.code, before.stdout).toBe(0);
    expect(before.stdout).toContain("no public site");
    const sync = await runCli(["site", "sync", "--config", ws.configFile]);
    expect(sync.code, sync.stderr).toBe(0);
    expect((await files(ws.storeDir)).filter((f) => !f.startsWith("releases/"))).toEqual(PUBLIC_FILES);
    const dmg = await readFile(path.join(ws.storeDir, "downloads/bridge-plugin-1.0.0.dmg"));
    expect(createHash("sha256").update(dmg).digest("hex")).toBe(records[0]!.sha256);
    const after = await runCli(["verify", "--config", ws.configFile]);
    expect(after.code, after.stdout).toBe(0);
    expect(after.stdout).not.toContain("warnings:");
    await rm(path.join(ws.storeDir, "downloads/bridge-plugin-1.1.0.zip"));
    const broken = await runCli(["verify", "--config", ws.configFile]);
    expect(broken.code).toBe(11);
    expect(broken.stdout).toContain("site: downloads/bridge-plugin-1.1.0.zip is missing, but the public catalog lists 1.1.0");
  });
});

describe.concurrent("relcast site build --out", () => {
  it("is refused inside a folder store (or through a link to it), and nothing is written", async () => {
    const ws = await cloneWorkspace(published.ws);
    const before = await files(ws.storeDir);
    await symlink(ws.storeDir, path.join(ws.dir, "store-link"));
    for (const out of [path.join(ws.storeDir, "releases"), path.join(ws.storeDir, "new", "site"), path.join(ws.dir, "store-link", "downloads"), ws.storeDir]) {
      const res = await runCli(["site", "build", "--out", out, "--config", ws.configFile]);
      expect(res.code, res.stderr).toBe(2);
      expect(res.stderr).toMatch(/--out .* is (inside the store|the store itself)/);
    }
    expect(await files(ws.storeDir)).toEqual(before);
    // A sibling whose name starts like the store's is not inside it.
    const sibling = `${ws.storeDir}-site`;
    const ok = await runCli(["site", "build", "--out", sibling, "--config", ws.configFile]);
    expect(ok.code, ok.stderr).toBe(0);
    expect(await files(sibling)).toEqual(PUBLIC_FILES);
  });
});

describe.skipIf(Boolean(motoReason))(`relcast site build from an S3 store (moto)${motoReason ? ` — skipped: ${motoReason}` : ""}`, () => {
  it("exports exactly the public tree, byte for byte, and a plain folder server answers it", async () => {
    const { ws, records } = await s3Ready!;
    const out = await mkdtemp(path.join(os.tmpdir(), "relcast-site-"));
    const res = await runCli(["site", "build", "--out", out, "--config", ws.configFile]);
    expect(res.code, res.stderr).toBe(0);
    expect(await files(out)).toEqual(PUBLIC_FILES);
    for (const r of records) {
      const zip = await readFile(path.join(out, `downloads/bridge-plugin-${r.version}.zip`));
      expect(createHash("sha256").update(zip).digest("hex")).toBe(r.autoupdate.sha256);
    }
    const again = await runCli(["site", "build", "--out", out, "--config", ws.configFile]);
    expect(again.stderr).toContain("already up to date");
    const server = await startServe(["--store", `file://${out}`, "--config", ws.configFile]);
    try {
      const appcast = await fetch(`${server.base}/api/v1/plugins/bridge-plugin/appcast.xml`);
      expect(appcast.status).toBe(200);
      expect(await appcast.text()).toContain("bridge-plugin-1.2.0.zip");
    } finally {
      await server.stop();
    }
  });
});
