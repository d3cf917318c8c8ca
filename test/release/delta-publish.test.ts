import { execFileSync } from "node:child_process";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openStore } from "../../src/store/open-store.js";
import type { ObjectStore } from "../../src/store/object-store.js";
import { describeTree } from "../helpers/delta-trees.js";
import { motoUnavailableReason, startMotoServer, type MotoServer } from "../helpers/moto-server.js";
import { storeWorkspace } from "../helpers/published-store.js";
import { runCli } from "../helpers/run-cli.js";
import type { Workspace } from "../helpers/workspace.js";

const motoReason = motoUnavailableReason();

/** Sparkle's view of the appcast, read by Python's xml.etree: build → [(deltaFrom, url, length, type, signature)]. */
const PY_DELTAS = `
import json, sys, xml.etree.ElementTree as ET
S = "{http://www.andymatuschak.org/xml-namespaces/sparkle}"
out = {}
for item in ET.parse(sys.argv[1]).getroot().iter("item"):
    d = item.find(S + "deltas")
    out[item.findtext(S + "version")] = [] if d is None else [
        [e.get(S + "deltaFrom"), e.get("url"), e.get("length"), e.get("type"), e.get(S + "edSignature")] for e in d.findall("enclosure")]
print(json.dumps(out))
`;

/** Ed25519 by Python cryptography over each delta's bytes (argv: public key, then signature and file pairs): "ok" or "bad" per pair. */
const PY_VERIFY = `
import base64, sys
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from cryptography.exceptions import InvalidSignature
pub = Ed25519PublicKey.from_public_bytes(base64.b64decode(sys.argv[1]))
for sig, file in zip(sys.argv[2::2], sys.argv[3::2]):
    try:
        pub.verify(base64.b64decode(sig), open(file, "rb").read()); print("ok")
    except InvalidSignature:
        print("bad")
`;

interface DeltaEntry { fromVersion: string; fromBuild: number; url: string; sizeBytes: number; sha256: string; edSignature: string }

// The folder store and the S3 store are two independent stores, publishes and checks: they run at the same
// time. Inside each, the tests run in order (they change the store and put it back).
describe.concurrent.each([
  ["folder store", false],
  ["S3 store (moto)", true],
] as const)("publish with Sparkle deltas on a %s", (_name, useS3) => {
  const skip = useS3 && Boolean(motoReason);
  let moto: MotoServer | undefined;
  let ws: Workspace;
  let store: ObjectStore;
  let scratch: string;
  const records = new Map<string, Record<string, any>>();
  const logs = new Map<string, string>();

  async function publish(version: string, build: number, more: string[] = []): Promise<Record<string, any>> {
    const p = await ws.plugin(version, build);
    const res = await runCli(ws.publishArgs(p, version, ["--json", ...more]));
    expect(res.code, res.stderr).toBe(0);
    const record = JSON.parse(res.stdout) as Record<string, any>;
    records.set(version, record);
    logs.set(version, res.stderr);
    return record;
  }
  const deltasOf = (version: string): DeltaEntry[] => records.get(version)!.autoupdate.deltas ?? [];

  beforeAll(async () => {
    if (skip) return;
    moto = useS3 ? await startMotoServer() : undefined;
    ws = await storeWorkspace(moto);
    // Opt back in to deltas (the shared workspace turns them off); maximum 5 is the default.
    const config = JSON.parse(execFileSync("cat", [ws.configFile]).toString()) as Record<string, unknown>;
    delete config.deltas;
    await writeFile(ws.configFile, JSON.stringify(config));
    const cfg = config as { store: string; s3?: Record<string, unknown> };
    store = await openStore(cfg.store, ws.dir, cfg.s3 ? { s3: cfg.s3 } : {});
    scratch = await mkdtemp(path.join(ws.dir, "scratch-"));
    // The store's first release, published with --no-deltas, stores no tree manifest: its objects are those a
    // relcast from before manifests leaves, and later deltas from it take that path.
    await publish("1.0.0", 100, ["--no-deltas"]);
    await publish("1.1.0", 110);
    await publish("1.2.0-beta.1", 115, ["--channel", "beta"]);
    await publish("1.0.1", 105); // an older build published later
    await publish("1.2.0", 120);
    expect((await runCli(["yank", "1.2.0", "--config", ws.configFile, "--reason", "bad build"])).code).toBe(0);
    await publish("1.3.0", 130);
    await publish("1.3.1", 131, ["--no-deltas"]);
  }, 600_000);

  afterAll(async () => {
    await store?.close?.();
    await moto?.stop();
  });

  it.skipIf(skip).sequential("picks older builds only, highest first, on the channel and stable, never yanked", () => {
    expect(deltasOf("1.0.0")).toEqual([]);
    expect(deltasOf("1.1.0").map((d) => [d.fromVersion, d.fromBuild])).toEqual([["1.0.0", 100]]);
    expect(deltasOf("1.2.0-beta.1").map((d) => d.fromVersion)).toEqual(["1.1.0", "1.0.0"]); // beta updates from stable too
    expect(deltasOf("1.0.1").map((d) => d.fromVersion)).toEqual(["1.0.0"]); // never from the newer 1.1.0
    expect(deltasOf("1.2.0").map((d) => d.fromVersion)).toEqual(["1.1.0", "1.0.1", "1.0.0"]); // not from the beta
    expect(deltasOf("1.3.0").map((d) => d.fromVersion)).toEqual(["1.1.0", "1.0.1", "1.0.0"]); // 1.2.0 is yanked
    expect(records.get("1.3.1")!.autoupdate.deltas).toBeUndefined(); // --no-deltas
    for (const d of deltasOf("1.3.0")) {
      expect(d.url).toBe(`https://updates.example.com/downloads/bridge-plugin-1.3.0-from-${d.fromVersion}.delta`);
      expect(d.sizeBytes).toBeLessThanOrEqual((records.get("1.3.0")!.autoupdate.sizeBytes * 7) / 8);
    }
  });

  it.skipIf(skip).sequential("stores a tree manifest beside each record that has deltas and makes later deltas from it; a release without one falls back to reading its zip, and says so", async () => {
    // --no-deltas reads nothing for a manifest.
    expect(await store.head("releases/1.3.1/tree.json")).toBeUndefined();
    expect(await store.head("releases/1.0.0/tree.json")).toBeUndefined();
    for (const version of ["1.1.0", "1.2.0-beta.1", "1.0.1", "1.2.0", "1.3.0"]) {
      const manifest = JSON.parse((await store.get(`releases/${version}/tree.json`))!.body.toString()) as { version: string; zip: { sha256: string; sizeBytes: number } };
      expect(manifest.version).toBe(version);
      expect(manifest.zip).toEqual({ sha256: records.get(version)!.autoupdate.sha256, sizeBytes: records.get(version)!.autoupdate.sizeBytes });
    }
    expect(logs.get("1.1.0")).toMatch(/delta from 1\.0\.0 .*1\.0\.0 has no tree manifest \(published before relcast stored them, or without a delta of its own\): its zip was read whole/);
    // From 1.1.0 (which has a manifest) nothing but the changed files is read; from 1.0.0 the zip, as before.
    expect(logs.get("1.3.0")).toMatch(/delta from 1\.1\.0 .*old tree from its manifest \(\d+ changed file\(s\) read from its zip by range\)/);
    expect(logs.get("1.3.0")).toMatch(/delta from 1\.0\.0 .*its zip was read whole/);
  });

  it.skipIf(skip).sequential("writes <sparkle:deltas> as generate_appcast does, matching the record, read by Python's xml.etree", async () => {
    const appcast = path.join(scratch, "appcast.xml");
    await writeFile(appcast, (await store.get("releases/appcast.xml"))!.body);
    const feed = JSON.parse(execFileSync("python3", ["-c", PY_DELTAS, appcast]).toString()) as Record<string, string[][]>;
    for (const version of ["1.1.0", "1.0.1", "1.3.0"]) {
      const r = records.get(version)!;
      expect(feed[String(r.autoupdate.buildNumber)]).toEqual(deltasOf(version).map((d) => [String(d.fromBuild), d.url, String(d.sizeBytes), "application/octet-stream", d.edSignature]));
    }
    expect(feed["131"]).toEqual([]);
  });

  it.skipIf(skip).sequential("stores each delta create-only beside the zip and in downloads/, signed over its bytes, and it rebuilds the new zip's tree", async () => {
    // The new release's tree as unzip sees it: one zip, unzipped once, that every delta must rebuild.
    const newZip = path.join(scratch, "1.3.0.zip");
    await writeFile(newZip, (await store.get("releases/1.3.0/bridge-plugin-1.3.0.zip"))!.body);
    const unzipped = path.join(scratch, "unzipped-1.3.0");
    execFileSync("unzip", ["-q", newZip, "-d", unzipped]);
    const newTree = await describeTree(path.join(unzipped, "BridgePlugin.bundle"));
    const signed: string[] = [];
    for (const d of deltasOf("1.3.0")) {
      const name = `bridge-plugin-1.3.0-from-${d.fromVersion}.delta`;
      const stored = (await store.get(`releases/1.3.0/${name}`))!.body;
      const copy = (await store.get(`downloads/${name}`))!.body;
      expect(copy.equals(stored)).toBe(true);
      expect(stored.length).toBe(d.sizeBytes);
      const file = path.join(scratch, name);
      await writeFile(file, stored);
      signed.push(d.edSignature, file);
      const oldZip = path.join(scratch, `${d.fromVersion}.zip`);
      await writeFile(oldZip, (await store.get(`releases/${d.fromVersion}/bridge-plugin-${d.fromVersion}.zip`))!.body);
      const out = path.join(scratch, `applied-${d.fromVersion}`, "BridgePlugin.bundle");
      const applied = await runCli(["delta", "apply", oldZip, out, file]);
      expect(applied.code, applied.stderr).toBe(0);
      expect(await describeTree(out), `the delta from ${d.fromVersion} rebuilds 1.3.0's tree`).toEqual(newTree);
    }
    // Python checks every delta's edSignature over its stored bytes (one interpreter for all of them).
    expect(execFileSync("python3", ["-c", PY_VERIFY, ws.key.publicKeyBase64, ...signed]).toString().trim().split("\n")).toEqual(deltasOf("1.3.0").map(() => "ok"));
  });

  // One verify of a store holding three independent faults (a damaged delta, a manifest wrong about its zip, a
  // manifest that is not JSON, each in another release) checks what three verifies of one fault each did before.
  it.skipIf(skip).sequential("verify checks every delta and applies it, and each tree manifest against its zip; a damaged delta or manifest fails verify; rebuild keeps the deltas; publish falls back from a manifest that does not hold up", async () => {
    const ok = await runCli(["verify", "--config", ws.configFile, "--public-key", ws.key.publicKeyBase64]);
    expect(ok.code, ok.stdout + ok.stderr).toBe(0);
    expect(ok.stdout, "verify checks every delta").toMatch(/deltas/);

    const rebuilt = await runCli(["rebuild", "--config", ws.configFile]);
    expect(rebuilt.code, rebuilt.stderr).toBe(0);
    expect((await store.get("releases/appcast.xml"))!.body.toString(), "rebuild keeps the deltas").toContain("bridge-plugin-1.3.0-from-1.1.0.delta");

    const immutable = "public, max-age=31536000, immutable";
    const deltaKey = "releases/1.3.0/bridge-plugin-1.3.0-from-1.0.1.delta";
    const deltaBytes = (await store.get(deltaKey))!.body;
    // A manifest consistent in itself (the tree hash does not cover CRC-32s), wrong about the zip.
    const crcKey = "releases/1.0.1/tree.json";
    const crcBytes = (await store.get(crcKey))!.body;
    const notJsonKey = "releases/1.1.0/tree.json";
    const notJsonBytes = (await store.get(notJsonKey))!.body;
    try {
      const damaged = Buffer.from(deltaBytes);
      damaged[damaged.length - 3] = damaged[damaged.length - 3]! ^ 0xff;
      await store.put(deltaKey, damaged, { contentType: "application/octet-stream", cacheControl: immutable });
      const manifest = JSON.parse(crcBytes.toString()) as { entries: Array<{ kind: string; path: string; zip?: { crc32: number } }> };
      const plist = manifest.entries.find((e) => e.path === "/Contents/Info.plist")!;
      plist.zip!.crc32 = (plist.zip!.crc32 + 1) >>> 0;
      await store.put(crcKey, Buffer.from(JSON.stringify(manifest)), { contentType: "application/json", cacheControl: immutable });
      await store.put(notJsonKey, Buffer.from("{ not json"), { contentType: "application/json", cacheControl: immutable });

      const bad = await runCli(["verify", "--config", ws.configFile, "--public-key", ws.key.publicKeyBase64]);
      expect(bad.code, bad.stdout + bad.stderr).toBe(11);
      expect(bad.stdout, "a damaged delta fails verify (hash)").toMatch(/1\.3\.0: delta releases\/1\.3\.0\/bridge-plugin-1\.3\.0-from-1\.0\.1\.delta has SHA-256/);
      expect(bad.stdout, "a damaged delta fails verify (signature)").toMatch(/1\.3\.0: delta releases\/1\.3\.0\/bridge-plugin-1\.3\.0-from-1\.0\.1\.delta: edSignature does not verify/);
      // Bytes the record does not pin are never opened, let alone applied (issue 33).
      expect(bad.stdout, "a delta the record does not pin is never applied").not.toMatch(/delta from 1\.0\.1 does not apply/);
      expect(bad.stdout, "verify checks each tree manifest against its zip").toMatch(/1\.0\.1: tree manifest releases\/1\.0\.1\/tree\.json does not describe the zip's tree: "\/Contents\/Info\.plist" differ/);
      expect(bad.stdout, "a manifest that is not JSON fails verify").toMatch(/1\.1\.0: .*tree\.json is not a valid tree manifest: it is not JSON/);

      // Publish reads 1.0.1's manifest too: put it back, so the fallback from 1.1.0's is the one thing seen.
      await store.put(crcKey, crcBytes, { contentType: "application/json", cacheControl: immutable });
      const p = await ws.plugin("1.4.0", 140);
      const res = await runCli(ws.publishArgs(p, "1.4.0", ["--dry-run"]));
      expect(res.code, res.stderr).toBe(0);
      expect(res.stderr, "publish falls back from a manifest that does not hold up").toMatch(/tree\.json is not a valid tree manifest: it is not JSON: its zip was read whole instead/);
    } finally {
      await store.put(deltaKey, deltaBytes, { contentType: "application/octet-stream", cacheControl: immutable });
      await store.put(crcKey, crcBytes, { contentType: "application/json", cacheControl: immutable });
      await store.put(notJsonKey, notJsonBytes, { contentType: "application/json", cacheControl: immutable });
    }
    // The store is back as the ok verify above saw it (byte for byte, so a second verify would repeat that one).
    for (const [key, bytes] of [[deltaKey, deltaBytes], [crcKey, crcBytes], [notJsonKey, notJsonBytes]] as const) {
      expect((await store.get(key))!.body.equals(bytes), `${key} is put back`).toBe(true);
    }
  });

  it.skipIf(skip).sequential("refuses to make a delta from an old zip that no longer matches its manifest or its record, and writes nothing", async () => {
    const key = "releases/1.1.0/bridge-plugin-1.1.0.zip";
    const original = (await store.get(key))!.body;
    const manifestKey = "releases/1.1.0/tree.json";
    const manifest = (await store.get(manifestKey))!.body;
    // The framework binary changes in every release and is diffed, so a delta from 1.1.0 reads it: damage its bytes inside the zip.
    const bridge = (JSON.parse(manifest.toString()) as { entries: Array<{ path: string; zip?: { offset: number } }> }).entries.find((e) => e.path.endsWith("/Versions/A/Bridge"))!.zip!.offset;
    const damaged = Buffer.from(original);
    damaged.write("TAMPERED", bridge + 30 + original.readUInt16LE(bridge + 26) + original.readUInt16LE(bridge + 28));
    await store.put(key, damaged, { contentType: "application/zip", cacheControl: "public, max-age=31536000, immutable" });
    try {
      const p = await ws.plugin("1.4.0", 140);
      const viaManifest = await runCli(ws.publishArgs(p, "1.4.0"));
      expect(viaManifest.code).toBe(11);
      expect(viaManifest.stderr).toMatch(/Versions\/A\/Bridge in .*bridge-plugin-1\.1\.0\.zip does not match its tree manifest/);
      expect(await store.head("releases/1.4.0/release.json")).toBeUndefined();
      // Without the manifest: the whole zip is checked against the record.
      await store.delete(manifestKey);
      const res = await runCli(ws.publishArgs(p, "1.4.0"));
      expect(res.code).toBe(11);
      expect(res.stderr).toMatch(/bridge-plugin-1\.1\.0\.zip does not match its record/);
      expect(res.stderr).toMatch(/--no-deltas/);
      expect(await store.head("releases/1.4.0/release.json")).toBeUndefined();
      expect(await store.head("releases/1.4.0/bridge-plugin-1.4.0.zip")).toBeUndefined();
    } finally {
      await store.put(key, original, { contentType: "application/zip", cacheControl: "public, max-age=31536000, immutable" });
      await store.put(manifestKey, manifest, { contentType: "application/json", cacheControl: "public, max-age=31536000, immutable" });
    }
  });
});
