import { mkdir, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../helpers/run-cli.js";
import { makeWorkspace, newKey, snapshotTree, type Workspace } from "../helpers/workspace.js";

type Plugin = { app: string; dmg: string; notes: string };
interface Case {
  name: string;
  exit: number;
  message: RegExp;
  prepare(ws: Workspace, p: Plugin): Promise<{ args: string[]; env?: NodeJS.ProcessEnv; unchanged?: string }>;
}

const cases: Case[] = [
  { name: "missing disk image", exit: 4, message: /disk image not found: .*nope\.dmg/, prepare: async (ws, p) => ({ args: ws.publishArgs({ ...p, dmg: path.join(ws.dir, "nope.dmg") }, "2.0.0") }) },
  { name: "empty disk image", exit: 4, message: /is empty \(0 bytes\)/, prepare: async (ws, p) => { const f = path.join(ws.dir, "empty.dmg"); await writeFile(f, ""); return { args: ws.publishArgs({ ...p, dmg: f }, "2.0.0") }; } },
  { name: "folder that is not a bundle", exit: 4, message: /is not a bundle: Contents\/Info\.plist is missing/, prepare: async (ws, p) => { const d = path.join(ws.dir, "notabundle"); await mkdir(d, { recursive: true }); return { args: ws.publishArgs({ ...p, app: d }, "2.0.0") }; } },
  { name: "missing notes", exit: 4, message: /cannot read notes file/, prepare: async (ws, p) => ({ args: ws.publishArgs({ ...p, notes: path.join(ws.dir, "none.md") }, "2.0.0") }) },
  { name: "non-UTF-8 notes", exit: 4, message: /not valid UTF-8/, prepare: async (ws, p) => { const f = path.join(ws.dir, "latin1.md"); await writeFile(f, Buffer.from([0x2d, 0x20, 0xe9, 0xff, 0x0a])); return { args: ws.publishArgs({ ...p, notes: f }, "2.0.0") }; } },
  { name: "version 1.2", exit: 5, message: /"1\.2" is not a semantic version/, prepare: async (ws, p) => ({ args: ws.publishArgs(p, "1.2") }) },
  { name: "version with leading zero", exit: 5, message: /"01\.2\.3" is not a semantic version/, prepare: async (ws, p) => ({ args: ws.publishArgs(p, "01.2.3") }) },
  { name: "version with build metadata", exit: 5, message: /build metadata/, prepare: async (ws, p) => ({ args: ws.publishArgs(p, "2.0.0+7") }) },
  { name: "key of the wrong length", exit: 6, message: /decodes to 16 bytes; expected 32 \(seed\) or 96/, prepare: async (ws, p) => { const f = path.join(ws.dir, "short.key"); await writeFile(f, Buffer.alloc(16, 7).toString("base64")); return { args: [...ws.publishArgs(p, "2.0.0"), "--key-file", f] }; } },
  { name: "key that is not base64", exit: 6, message: /not valid base64/, prepare: async (ws, p) => { const f = path.join(ws.dir, "bad.key"); await writeFile(f, "not*base64!"); return { args: [...ws.publishArgs(p, "2.0.0"), "--key-file", f] }; } },
  { name: "no key at all", exit: 6, message: /no signing key given/, prepare: async (ws, p) => ({ args: ws.publishArgs(p, "2.0.0").filter((a, i, all) => a !== "--key-file" && all[i - 1] !== "--key-file"), env: { RELCAST_SIGNING_KEY: "" } }) },
  { name: "key that does not match SUPublicEDKey", exit: 6, message: /does not match SUPublicEDKey/, prepare: async (ws) => { const other = newKey(); const p = await ws.plugin("2.0.0", 200, { publicKey: other.publicKeyBase64, name: "Other" }); return { args: ws.publishArgs(p, "2.0.0") }; } },
  { name: "CFBundleShortVersionString mismatch", exit: 7, message: /CFBundleShortVersionString in Info\.plist is 2\.0\.0, but --version is 2\.0\.1/, prepare: async (ws, p) => ({ args: ws.publishArgs(p, "2.0.1") }) },
  { name: "config with an unknown field", exit: 3, message: /unknown field.*colour|colour.*unknown/i, prepare: async (ws, p) => { const f = path.join(ws.dir, "bad-config.json"); await writeFile(f, JSON.stringify({ pluginId: "x", displayName: "X", publisher: "P", appUrl: "https://a.example", colour: "red" })); return { args: [...ws.publishArgs(p, "2.0.0"), "--config", f] }; } },
  { name: "config missing appUrl", exit: 3, message: /appUrl.*missing|missing.*appUrl/, prepare: async (ws, p) => { const f = path.join(ws.dir, "no-url.json"); await writeFile(f, JSON.stringify({ pluginId: "x", displayName: "X", publisher: "P" })); return { args: [...ws.publishArgs(p, "2.0.0"), "--config", f] }; } },
  { name: "config that is not JSON", exit: 3, message: /is not valid JSON/, prepare: async (ws, p) => { const f = path.join(ws.dir, "broken.json"); await writeFile(f, "{ pluginId: "); return { args: [...ws.publishArgs(p, "2.0.0"), "--config", f] }; } },
  { name: "notes over 256 KiB", exit: 4, message: /notes file .*huge\.md is \d+ bytes; the limit is 262144/, prepare: async (ws, p) => { const f = path.join(ws.dir, "huge.md"); await writeFile(f, "- a very long note\n".repeat(20_000)); return { args: ws.publishArgs({ ...p, notes: f }, "2.0.0") }; } },
  { name: "--dmg that is a folder", exit: 4, message: /--dmg .* is not a file/, prepare: async (ws, p) => ({ args: ws.publishArgs({ ...p, dmg: ws.dir }, "2.0.0") }) },
  { name: "--app that is a file", exit: 4, message: /--app .* is a file, not a bundle folder/, prepare: async (ws, p) => ({ args: ws.publishArgs({ ...p, app: p.dmg }, "2.0.0") }) },
  { name: "prerelease whose build ranks below an older release", exit: 5, message: /build order: .*2\.0\.0-rc\.1 \(build 50\)/, prepare: async (ws) => { const rc = await ws.plugin("2.0.0-rc.1", 50); return { args: ws.publishArgs(rc, "2.0.0-rc.1") }; } },
  { name: "unreachable S3 endpoint", exit: 9, message: /unreachable/, prepare: async (ws, p) => { const f = path.join(ws.dir, "s3-down.json"); await writeFile(f, JSON.stringify({ pluginId: "bridge-plugin", displayName: "B", publisher: "P", appUrl: "https://a.example", store: "s3://relcast-nowhere", s3: { endpoint: "http://127.0.0.1:1", forcePathStyle: true, region: "us-east-1", requestTimeoutMs: 500 } })); return { args: [...ws.publishArgs(p, "2.0.0"), "--config", f], env: { AWS_ACCESS_KEY_ID: "test", AWS_SECRET_ACCESS_KEY: "test" } }; } },
  { name: "catalog hand-edited into invalid JSON", exit: 12, message: /catalog .*catalog\.json is not valid JSON[\s\S]*relcast rebuild/, prepare: async (ws, p) => { const store = path.join(ws.dir, "broken-store"); await mkdir(path.join(store, "releases"), { recursive: true }); await writeFile(path.join(store, "releases", "catalog.json"), '{"pluginId": "bridge-plugin", "count": 1, "versions": [ {"version": "1.0.0",'); return { args: [...ws.publishArgs(p, "2.0.0"), "--store", `file://${store}`], unchanged: store }; } },
  { name: "unsupported store URL", exit: 3, message: /unsupported store URL "ftp:\/\/x"/, prepare: async (ws, p) => ({ args: [...ws.publishArgs(p, "2.0.0"), "--store", "ftp://x"] }) },
];

describe("publish refuses bad input with one clear error and writes nothing", () => {
  let ws: Workspace;
  let plugin: Plugin;
  let before: Record<string, string>;
  beforeAll(async () => {
    ws = await makeWorkspace();
    const first = await ws.plugin("1.0.0", 100);
    const res = await runCli(ws.publishArgs(first, "1.0.0"));
    expect(res.code, res.stderr).toBe(0);
    plugin = await ws.plugin("2.0.0", 200);
    before = await snapshotTree(ws.storeDir);
  });

  it.each(cases)("$name → exit $exit", async (c) => {
    const { args, env, unchanged } = await c.prepare(ws, plugin);
    const other = unchanged ? await snapshotTree(unchanged) : undefined;
    const res = await runCli(args, env ? { env } : {});
    expect(res.code, res.stderr).toBe(c.exit);
    expect(res.stderr).toMatch(c.message);
    expect(res.stderr).toMatch(/^ {2}fix: \S/m);
    expect(res.stderr).not.toMatch(/\n\s+at .*\.js:\d+/);
    expect(res.stderr.split("\n").filter((l) => l.startsWith("relcast: error"))).toHaveLength(1);
    expect(res.stdout + res.stderr).not.toContain(ws.key.seedBase64);
    expect(await snapshotTree(ws.storeDir)).toEqual(before);
    if (unchanged) expect(await snapshotTree(unchanged)).toEqual(other);
  });

  it("prints a stack trace only with --debug", async () => {
    const res = await runCli(["--debug", ...ws.publishArgs(plugin, "1.2")]);
    expect(res.code).toBe(5);
    expect(res.stderr).toMatch(/\n\s+at /);
  });

  it("a store folder that cannot be created is a store error", async () => {
    const blocker = path.join(ws.dir, "blocker");
    await writeFile(blocker, "a file where the store folder should be");
    const res = await runCli([...ws.publishArgs(plugin, "2.0.0"), "--store", `file://${blocker}/store`]);
    expect(res.code, res.stderr).toBe(9);
    expect(res.stderr).toMatch(/folder store .*blocker\/store is not writable/);
    await rm(blocker);
  });
});
