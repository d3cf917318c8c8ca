import { execFileSync } from "node:child_process";
import { mkdir, readFile, rm, symlink, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { describeTree } from "../helpers/delta-trees.js";
import { runCli } from "../helpers/run-cli.js";
import { makeWorkspace, snapshotTree, type Workspace } from "../helpers/workspace.js";

/**
 * A laptop's second release on stock macOS: no xz, no bzip2. The CLI runs with
 * a PATH that holds only a link to node (no xz, no bzip2, no other program), so
 * nothing outside Node can be spawned. Earlier releases were published where xz
 * was (lzma deltas); `verify` must still read those without it.
 */
let ws: Workspace;
let bareEnv: NodeJS.ProcessEnv;
const records = new Map<string, Record<string, any>>();

async function publish(version: string, build: number, env: NodeJS.ProcessEnv = {}): Promise<Record<string, any>> {
  const p = await ws.plugin(version, build);
  const res = await runCli(ws.publishArgs(p, version, ["--json"]), { env });
  expect(res.code, res.stderr).toBe(0);
  const record = JSON.parse(res.stdout) as Record<string, any>;
  records.set(version, record);
  return record;
}

beforeAll(async () => {
  ws = await makeWorkspace({ deltas: { maximum: 5 } });
  const bin = path.join(ws.dir, "bare-bin");
  await mkdir(bin);
  await symlink(process.execPath, path.join(bin, "node"));
  bareEnv = { PATH: bin };
  await publish("1.0.0", 100); // with xz: lzma deltas from here on
  await publish("1.1.0", 110);
  await publish("1.2.0", 120, bareEnv);
});

afterAll(async () => {
  if (ws) await rm(ws.dir, { recursive: true, force: true });
});

// Every test reads the store the three publishes above left, and those that run a publish check it writes
// nothing: they run at the same time.
describe.concurrent("publish and verify with no xz or bzip2 on the PATH", () => {
  it("publishes deltas compressed with zlib, which Python's zlib reads as Sparkle's raw DEFLATE container", async () => {
    const deltas = records.get("1.2.0")!.autoupdate.deltas as Array<{ fromVersion: string; sizeBytes: number }>;
    expect(deltas.map((d) => d.fromVersion)).toEqual(["1.1.0", "1.0.0"]);
    for (const d of deltas) {
      const file = path.join(ws.storeDir, "releases", "1.2.0", `bridge-plugin-1.2.0-from-${d.fromVersion}.delta`);
      const bytes = await readFile(file);
      expect(bytes.length).toBe(d.sizeBytes);
      const parsed = JSON.parse(execFileSync("python3", [path.join(import.meta.dirname, "..", "sparkle", "delta", "read-delta.py"), file], { encoding: "utf8" })) as { compression: number; major: number };
      expect(parsed).toMatchObject({ compression: 5, major: 3 });
    }
    // The earlier release, published where xz was, has lzma deltas: Debian's xz reads their body as one sound stream.
    const earlier = await readFile(path.join(ws.storeDir, "releases", "1.1.0", "bridge-plugin-1.1.0-from-1.0.0.delta"));
    expect(earlier[4]).toBe(2);
    execFileSync("xz", ["-t", "--single-stream"], { input: earlier.subarray(6) });
  });

  it("`relcast delta apply` without xz turns the old zip into the new release's tree", async () => {
    const scratch = path.join(ws.dir, "scratch");
    await mkdir(scratch);
    for (const [from, to] of [["1.1.0", "1.2.0"], ["1.0.0", "1.1.0"]] as const) {
      const out = path.join(scratch, `${from}-to-${to}`, "BridgePlugin.bundle");
      const delta = path.join(ws.storeDir, "releases", to, `bridge-plugin-${to}-from-${from}.delta`);
      const applied = await runCli(["delta", "apply", path.join(ws.storeDir, "releases", from, `bridge-plugin-${from}.zip`), out, delta], { env: bareEnv });
      expect(applied.code, applied.stderr).toBe(0);
      const unzipped = path.join(scratch, `unzipped-${to}-${from}`);
      execFileSync("unzip", ["-q", path.join(ws.storeDir, "releases", to, `bridge-plugin-${to}.zip`), "-d", unzipped]);
      expect(await describeTree(out)).toEqual(await describeTree(path.join(unzipped, "BridgePlugin.bundle")));
    }
  });

  it("verify reads and applies every delta, lzma ones included, without xz", async () => {
    const res = await runCli(["verify", "--config", ws.configFile, "--public-key", ws.key.publicKeyBase64], { env: bareEnv });
    expect(res.code, res.stdout + res.stderr).toBe(0);
    expect(res.stdout).toMatch(/deltas/);
  });

  it("a re-run keeps the compression of the stored deltas: a no-op where xz now is, a clear refusal where it is not", async () => {
    const snapshot = async () => JSON.stringify(await snapshotTree(ws.storeDir));
    const before = await snapshot();
    // 1.2.0 was published without xz (zlib deltas); re-run here, where xz is: the same zlib bytes, nothing to do.
    const p = await ws.plugin("1.2.0", 120);
    const again = await runCli(ws.publishArgs(p, "1.2.0"));
    expect(again.code, again.stderr).toBe(0);
    // 1.1.0 has lzma deltas: without xz they cannot be remade byte for byte, and the re-run says so.
    const q = await ws.plugin("1.1.0", 110);
    const refused = await runCli(ws.publishArgs(q, "1.1.0"), { env: bareEnv });
    expect(refused.code).toBe(4);
    expect(refused.stderr).toMatch(/already published with lzma deltas/);
    expect(refused.stderr).toMatch(/xz/);
    expect(await snapshot()).toBe(before);
  });

  it("an explicit lzma setting without xz is refused before anything is written, naming xz and zlib", async () => {
    const config = JSON.parse(await readFile(ws.configFile, "utf8")) as Record<string, unknown>;
    const strict = path.join(ws.dir, "lzma.config.json");
    await writeFile(strict, JSON.stringify({ ...config, deltas: { maximum: 5, compression: "lzma" } }));
    const p = await ws.plugin("1.3.0", 130);
    const args = ws.publishArgs(p, "1.3.0").map((a) => (a === ws.configFile ? strict : a));
    const res = await runCli(args, { env: bareEnv });
    expect(res.code).toBe(4);
    expect(res.stderr).toMatch(/xz/);
    expect(res.stderr).toMatch(/zlib/);
    await expect(readFile(path.join(ws.storeDir, "releases", "1.3.0", "bridge-plugin-1.3.0.zip"))).rejects.toThrow(/ENOENT/);
  });
});
