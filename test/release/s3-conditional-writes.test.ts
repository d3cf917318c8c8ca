import { randomBytes } from "node:crypto";
import { readFile, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openStore } from "../../src/store/open-store.js";
import type { ObjectStore } from "../../src/store/object-store.js";
import { startFaultProxy, type FaultProxy } from "../helpers/fault-proxy.js";
import { motoUnavailableReason, startMotoServer, type MotoServer } from "../helpers/moto-server.js";
import { runCli, startCli, type CliResult } from "../helpers/run-cli.js";
import { bucketReader } from "../helpers/moto-http.js";
import { makeWorkspace, type Workspace } from "../helpers/workspace.js";

const reason = motoUnavailableReason();
const S3 = { forcePathStyle: true, region: "us-east-1" };
const VERSIONS = ["1.0.0", "1.1.0", "1.2.0", "1.3.0", "1.4.0", "1.5.0"];

/**
 * Issue 33 item 1: relcast proves a store enforces If-None-Match and If-Match
 * before its first write. A proxy in front of moto that drops both request
 * headers stands for an S3-compatible service that ignores them: without the
 * proof, six concurrent publishes through it all exited 0 and the catalog
 * kept one release.
 */
describe.skipIf(Boolean(reason))(`conditional writes are proved, not assumed (moto)${reason ? ` — skipped: ${reason}` : ""}`, () => {
  let moto: MotoServer;
  let dropping: FaultProxy;
  let plain: FaultProxy;
  const made: Workspace[] = [];
  beforeAll(async () => {
    moto = await startMotoServer();
    dropping = await startFaultProxy(moto.endpoint, { rate: 0, seed: 1, dropHeaders: ["if-none-match", "if-match"] });
    plain = await startFaultProxy(moto.endpoint, { rate: 0, seed: 1 });
  });
  afterAll(async () => {
    await plain?.stop();
    await dropping?.stop();
    await moto?.stop();
    for (const ws of made) await rm(ws.dir, { recursive: true, force: true });
  });

  /** A fresh bucket; `ws` publishes through `endpoint`, `direct` reads moto itself. */
  async function setup(endpoint: string, s3Extra: Record<string, unknown> = {}): Promise<{ ws: Workspace; direct: ObjectStore; bucket: string }> {
    const bucket = `cw-${randomBytes(3).toString("hex")}`;
    await fetch(`${moto.endpoint}/${bucket}`, { method: "PUT" });
    const ws = await makeWorkspace({ store: `s3://${bucket}/site`, s3: { ...S3, endpoint, ...s3Extra } });
    made.push(ws);
    const direct = await openStore(`s3://${bucket}/site`, ws.dir, { s3: { ...S3, endpoint: moto.endpoint } });
    return { ws, direct, bucket };
  }
  const keysIn = async (store: ObjectStore) => {
    const keys: string[] = [];
    for await (const m of store.list("")) keys.push(m.key);
    return keys;
  };
  const catalogVersions = async (store: ObjectStore) =>
    JSON.parse((await store.get("releases/catalog.json"))!.body.toString("utf8")).versions.map((v: { version: string; sha256: string }) => ({ version: v.version, sha256: v.sha256 }));
  const multipartUploads = async (bucket: string) => (await bucketReader(moto.endpoint, bucket).uploads()).length;

  it("six concurrent publishes through a proxy that drops If-None-Match/If-Match are all refused (exit 9), saying what was tried, what it means and what to do; nothing is written", async () => {
    const { ws, direct, bucket } = await setup(dropping.endpoint);
    const plugins = await Promise.all(VERSIONS.map((v, i) => ws.plugin(v, 100 + i)));
    const results = await Promise.all(VERSIONS.map((v, i) => runCli(ws.publishArgs(plugins[i]!, v, ["--quiet"]))));
    for (const r of results) {
      expect(r.code, r.stderr).toBe(9);
      expect(r.stderr).toMatch(/relcast: error \[E_STORE\]: the store at s3:\/\/cw-\w+\/site \(endpoint http:\/\/127\.0\.0\.1:\d+\) does not enforce conditional writes/);
      expect(r.stderr).toContain("it accepted a second create-only PutObject of the same key (If-None-Match: *)");
      expect(r.stderr).toContain("a PutObject whose If-Match names a wrong ETag");
      expect(r.stderr).toMatch(/could silently lose releases/);
      expect(r.stderr).toMatch(/fix: use a store that enforces If-None-Match and If-Match .*"conditionalWrites": "unverified-single-writer"/);
    }
    expect(await keysIn(direct)).toEqual([]);
    expect(await multipartUploads(bucket)).toBe(0);
  }, 600_000); // a hang guard, not a speed check

  // The control, the same publishes straight to moto all succeeding with the catalog keeping every one (each run
  // proving the store first and removing its probe keys, verify passing), is s3-publish.test.ts's ten publishes at once.

  it("two publishes of one version with different bytes, at once: exactly one succeeds and the catalog holds its bytes", async () => {
    const { ws, direct } = await setup(moto.endpoint);
    const a = await ws.plugin("2.0.0", 200, { name: "BridgeA", dmgBytes: 200 * 1024 });
    const b = await ws.plugin("2.0.0", 200, { name: "BridgeB", dmgBytes: 300 * 1024 });
    const [ra, rb] = await Promise.all([runCli(ws.publishArgs(a, "2.0.0", ["--quiet", "--json"])), runCli(ws.publishArgs(b, "2.0.0", ["--quiet", "--json"]))]);
    const won = [ra, rb].filter((r) => r.code === 0);
    expect(won, `${ra.stderr}\n${rb.stderr}`).toHaveLength(1);
    const lost = [ra, rb].find((r) => r.code !== 0)!;
    expect(lost.stderr).toMatch(/relcast: error \[E_CONFLICT\]/);
    const entries = await catalogVersions(direct);
    expect(entries).toEqual([{ version: "2.0.0", sha256: JSON.parse(won[0]!.stdout).sha256 }]);
  }, 600_000);

  it('the opt-out ("conditionalWrites": "unverified-single-writer") publishes through the same proxy, warning every run; a catalog write the store then loses fails the publish (exit 9) instead of reporting success', async () => {
    const { ws, direct } = await setup(dropping.endpoint, { conditionalWrites: "unverified-single-writer" });
    const first = await runCli(ws.publishArgs(await ws.plugin("3.0.0", 300), "3.0.0", ["--quiet"]));
    expect(first.code, first.stderr).toBe(0);
    expect(first.stderr).toMatch(/warning: conditional writes are not verified for this store .*releases can be lost from the catalog without an error/);
    // What a lost race looks like from one publish: the store answers 200 to its catalog write and keeps the other run's catalog.
    dropping.target({
      name: "catalog write lost",
      match: (r) => r.method === "PUT" && r.url.split("?")[0]!.endsWith("/site/releases/catalog.json"),
      fault: "200-not-stored",
    });
    const p31 = await ws.plugin("3.1.0", 310);
    const lost = await runCli(ws.publishArgs(p31, "3.1.0", ["--quiet"]));
    expect(dropping.stats.targeted["catalog write lost"]).toBe(1);
    expect(lost.code, lost.stderr).toBe(9);
    expect(lost.stderr).toMatch(/relcast: error \[E_STORE\]: the store lost this publish's write: the catalog read back from s3:\/\/cw-\w+\/site\/releases\/catalog\.json after the feeds were written does not hold this release \(it does not list 3\.1\.0\)/);
    expect(lost.stderr).toMatch(/fix: run `relcast verify`/);
    expect((await catalogVersions(direct)).map((e: { version: string }) => e.version)).toEqual(["3.0.0"]);
    // The record is there: the same command run again adds the release.
    const again = await runCli(ws.publishArgs(p31, "3.1.0", ["--quiet"]));
    expect(again.code, again.stderr).toBe(0);
    expect((await catalogVersions(direct)).map((e: { version: string }) => e.version)).toEqual(["3.1.0", "3.0.0"]);
  }, 600_000);

  const probeKeyOf = (url: string) => /\/\.relcast\/probe\/([0-9a-f]+)/.exec(url)?.[1];

  /**
   * One store with two releases published through the plain proxy, made once for the three tests below that need a
   * published store (the proof test's own two publishes, which it checks: the runs' results and the probe keys seen
   * by the end of each). The yank/rebuild/site sync refusals and the Ctrl-C during a yank's proof only read it.
   */
  let published: Promise<{ ws: Workspace; direct: ObjectStore; results: CliResult[]; probesSeen: number[] }> | undefined;
  const publishedStore = () =>
    (published ??= (async () => {
      const { ws, direct } = await setup(plain.endpoint);
      const seen = new Set<string>();
      // A waiter that never matches sees every request: it collects the probe keys used.
      void plain.waitFor((r) => (probeKeyOf(r.url) !== undefined && void seen.add(probeKeyOf(r.url)!), false));
      const results: CliResult[] = [];
      const probesSeen: number[] = [];
      for (const [i, v] of ["5.0.0", "5.1.0"].entries()) {
        results.push(await runCli(ws.publishArgs(await ws.plugin(v, 500 + i), v, ["--quiet"])));
        probesSeen.push(seen.size);
      }
      return { ws, direct, results, probesSeen };
    })());

  it("the proof runs once per run, on keys of its own that it removes; the next run proves again; gc removes a probe key a killed run left", async () => {
    const { ws, direct, results, probesSeen } = await publishedStore();
    for (const [i, res] of results.entries()) {
      expect(res.code, res.stderr).toBe(0);
      expect(probesSeen[i], `probe keys seen by the end of publish ${i + 1}`).toBe(i + 1);
    }
    expect((await keysIn(direct)).filter((k) => k.startsWith(".relcast/"))).toEqual([]);
    await direct.put(".relcast/probe/0badc0ffee", "left by a killed run", { contentType: "text/plain" });
    const gc = await runCli(["gc", "--config", ws.configFile, "--older-than", "0"]);
    expect(gc.code, gc.stderr).toBe(0);
    expect(gc.stderr).toContain("removed conditional-write probe site/.relcast/probe/0badc0ffee");
    expect((await keysIn(direct)).filter((k) => k.startsWith(".relcast/"))).toEqual([]);
  }, 600_000);

  it("yank, rebuild and site sync through the proxy are refused too, before their first write", async () => {
    const { ws, direct, results } = await publishedStore();
    expect(results.map((r) => r.code)).toEqual([0, 0]);
    await direct.delete("index.html"); // so that site sync has something to write
    const before = await keysIn(direct);
    const through = path.join(ws.dir, "dropping.config.json");
    const config = JSON.parse(await readFile(ws.configFile, "utf8"));
    await writeFile(through, JSON.stringify({ ...config, s3: { ...config.s3, endpoint: dropping.endpoint } }));
    for (const args of [["yank", "5.1.0"], ["rebuild"], ["site", "sync"]]) {
      const res = await runCli([...args, "--config", through]);
      expect(res.code, `${args.join(" ")}: ${res.stderr}`).toBe(9);
      expect(res.stderr).toMatch(/does not enforce conditional writes/);
    }
    expect(await keysIn(direct)).toEqual(before);
  }, 600_000);

  it.each([
    ["yank (no signal handler of its own)", ["yank", "5.1.0"]],
    ["publish", null],
  ] as const)("Ctrl-C during the proof of %s removes the probe key and writes nothing", async (_label, command) => {
    // The yank runs on the store published above; the publish, of a first release, on an empty one.
    const { ws, direct } = command ? await publishedStore() : await setup(plain.endpoint);
    if (command) expect((await publishedStore()).results.map((r) => r.code)).toEqual([0, 0]);
    const before = await keysIn(direct);
    const isWrongEtagPut = (r: { method: string; url: string; headers: Record<string, unknown> }) => r.method === "PUT" && probeKeyOf(r.url) !== undefined && r.headers["if-match"] !== undefined;
    plain.target({ name: `hold the proof ${_label}`, match: isWrongEtagPut, fault: "stall", times: 100 });
    try {
      const run = startCli(command ? [...command, "--config", ws.configFile] : ws.publishArgs(await ws.plugin("6.1.0", 610), "6.1.0"));
      await plain.waitFor(isWrongEtagPut);
      run.child.kill("SIGINT");
      const res = await run.done;
      if (command) expect(res.signal, res.stderr).toBe("SIGINT");
      else {
        expect(res.code, res.stderr).toBe(130);
        expect(res.stderr).toMatch(/relcast: interrupted by SIGINT in step preflight; nothing became public and nothing was written/);
        expect(res.stderr).toMatch(/relcast: removed the conditional-write probe site\/\.relcast\/probe\/[0-9a-f]+/);
      }
    } finally {
      plain.clearTargets();
    }
    expect(await keysIn(direct)).toEqual(before);
  }, 600_000);
});
