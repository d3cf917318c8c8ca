import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { feedProblems } from "../helpers/feed-consistency.js";
import { motoUnavailableReason, startMotoServer, type MotoServer } from "../helpers/moto-server.js";
import { runCli } from "../helpers/run-cli.js";
import { bucketReader } from "../helpers/moto-http.js";
import { makeWorkspace, type Workspace } from "../helpers/workspace.js";
import { openStore } from "../../src/store/open-store.js";
import type { ObjectStore } from "../../src/store/object-store.js";

const reason = motoUnavailableReason();

describe.skipIf(Boolean(reason))(`publish to S3 (moto_server)${reason ? ` — skipped: ${reason}` : ""}`, () => {
  let moto: MotoServer;
  beforeAll(async () => {
    moto = await startMotoServer();
  });
  afterAll(async () => {
    await moto?.stop();
  });

  async function s3Workspace(): Promise<{ ws: Workspace; bucket: string; store: ObjectStore }> {
    const bucket = `rel-${randomBytes(4).toString("hex")}`;
    const s3 = { endpoint: moto.endpoint, forcePathStyle: true, region: "us-east-1" };
    const ws = await makeWorkspace({ store: `s3://${bucket}/plugins`, s3 });
    await fetch(`${moto.endpoint}/${bucket}`, { method: "PUT" });
    const store = await openStore(`s3://${bucket}/plugins`, ws.dir, { s3 });
    return { ws, bucket, store };
  }

  it("uploads with s3:// URIs in the record, right content types and cache headers (checked over plain HTTP, past relcast's store code)", async () => {
    const { ws, bucket } = await s3Workspace();
    const p = await ws.plugin("1.0.0", 100);
    const res = await runCli(ws.publishArgs(p, "1.0.0", ["--json"]));
    expect(res.code, res.stderr).toBe(0);
    const record = JSON.parse(res.stdout);
    expect(record.downloadUrl).toBe(`s3://${bucket}/plugins/releases/1.0.0/bridge-plugin-1.0.0.dmg`);
    expect(record.appcastUrl).toBe(`s3://${bucket}/plugins/releases/appcast.xml`);
    const head = (key: string) => bucketReader(moto.endpoint, bucket).head(`plugins/${key}`);
    expect(await head("releases/1.0.0/bridge-plugin-1.0.0.dmg")).toMatchObject({ ContentType: "application/x-apple-diskimage", CacheControl: "public, max-age=31536000, immutable", ContentLength: 262144 });
    expect(await head("releases/1.0.0/bridge-plugin-1.0.0.zip")).toMatchObject({ ContentType: "application/zip" });
    expect(await head("releases/latest/bridge-plugin-1.0.0.dmg")).toMatchObject({ CacheControl: "no-cache" });
    expect(await head("releases/catalog.json")).toMatchObject({ ContentType: "application/json", CacheControl: "no-cache" });
    expect(await head("releases/appcast.xml")).toMatchObject({ ContentType: "application/xml", CacheControl: "no-cache" });
    const again = await runCli(ws.publishArgs(p, "1.0.0"));
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).toContain("already published");
  });

  // The store the 10 concurrent publishes leave: the rebuild test below breaks its catalog (two publishes fewer).
  let raced: { ws: Workspace; store: ObjectStore } | undefined;

  // 10, not 20, at once: every publish still starts together and races the others for the catalog, the appcast and
  // latest/ (all must pass and none be lost); the folder store's test (concurrent-publish) keeps 20 at once. Each S3
  // publish costs the one moto_server several times a folder publish, and 20 took ~180 s of the suite's time.
  // Every publish proves the store's conditional writes first (the default): this is also the control of
  // s3-conditional-writes.test.ts, whose publishes through a proxy that drops If-None-Match/If-Match are all refused.
  it("10 publishes at once: catalog count 10, 10 appcast items, all records; each proved conditional writes and removed its probe; verify passes", async () => {
    const { ws, store } = await s3Workspace();
    const versions = Array.from({ length: 10 }, (_, i) => `2.${i}.0`);
    const plugins = await Promise.all(versions.map((v, i) => ws.plugin(v, 2000 + i)));
    const results = await Promise.all(versions.map((v, i) => runCli(ws.publishArgs(plugins[i]!, v, ["--quiet"]))));
    for (const r of results) expect(r.code, r.stderr).toBe(0);
    const catalog = JSON.parse((await store.get("releases/catalog.json"))!.body.toString("utf8"));
    expect(catalog.count).toBe(10);
    expect(new Set(catalog.versions.map((v: { version: string }) => v.version))).toEqual(new Set(versions));
    const appcast = (await store.get("releases/appcast.xml"))!.body.toString("utf8");
    expect(appcast.match(/<item>/g)).toHaveLength(10);
    for (const v of versions) expect(await store.head(`releases/${v}/release.json`)).toBeDefined();
    expect(await feedProblems(store, "bridge-plugin")).toEqual([]);
    const latest: string[] = [];
    for await (const o of store.list("releases/latest/")) latest.push(o.key);
    expect(latest.sort()).toEqual(["releases/latest/bridge-plugin-2.9.0.dmg", "releases/latest/bridge-plugin-2.9.0.zip"]);
    const probes: string[] = [];
    for await (const o of store.list(".relcast/")) probes.push(o.key);
    expect(probes, "every run removes its conditional-write probe keys").toEqual([]);
    const verify = await runCli(["verify", "--config", ws.configFile]);
    expect(verify.code, verify.stdout + verify.stderr).toBe(0);
    raced = { ws, store };
  }, 900_000); // 10 publishes at once: a hang guard, not a speed check

  it("rebuild restores a catalog that was hand-edited into invalid JSON", async () => {
    expect(raced, "needs the store of the 10 concurrent publishes above").toBeDefined();
    const { ws, store } = raced!;
    const good = (await store.get("releases/catalog.json"))!.body.toString("utf8");
    await store.put("releases/catalog.json", "{ broken", { contentType: "application/json" });
    const p = await ws.plugin("3.0.0", 3000);
    const refused = await runCli(ws.publishArgs(p, "3.0.0"));
    expect(refused.code).toBe(12);
    expect(refused.stderr).toMatch(/catalog .* is not valid JSON[\s\S]*relcast rebuild/);
    expect(await store.head("releases/3.0.0/bridge-plugin-3.0.0.dmg")).toBeUndefined();
    const rebuilt = await runCli(["rebuild", "--config", ws.configFile]);
    expect(rebuilt.code, rebuilt.stderr).toBe(0);
    expect(JSON.parse((await store.get("releases/catalog.json"))!.body.toString("utf8"))).toEqual(JSON.parse(good));
  });
});
