import { createHash, randomBytes } from "node:crypto";
import { cp, mkdir, readFile, rename, rm, symlink, unlink, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { motoUnavailableReason, startMotoServer, type MotoServer } from "../helpers/moto-server.js";
import { startS3Probe, type S3Probe } from "../helpers/boto3-probe.js";
import { runCli } from "../helpers/run-cli.js";
import { makeWorkspace, snapshotTree, type Workspace } from "../helpers/workspace.js";
import { openStore } from "../../src/store/open-store.js";
import type { ObjectStore } from "../../src/store/object-store.js";
import { contentTypeFor } from "../../src/store/content-types.js";
import { CATALOG_KEY, dmgFileName, downloadKey, LATEST_PREFIX, latestDownloadName, latestDownloadStateKey, versionedKey, zipFileName } from "../../src/domain/release-layout.js";

/**
 * What `site sync` (and `site build`) may trust, on one published folder
 * store restored before each test: the catalog only where the immutable
 * records agree with it, a copy only when it can be made, the store's
 * folders only as real folders (a dry run fails as the real run does), and
 * `releases/latest/` only holding release copies. Then, on S3, a copy with
 * the right bytes but headers relcast does not write is rewritten by --repair.
 */
const ID = "bridge-plugin";
const sha256 = (b: Buffer) => createHash("sha256").update(b).digest("hex");
/** Same size, other bytes. */
const damaged = (b: Buffer) => Buffer.concat([b.subarray(0, b.length - 32), Buffer.from(b.subarray(b.length - 32).map((x) => x ^ 0xff))]);
const immutable = "public, max-age=31536000, immutable";

describe("site sync on a folder store: what it trusts", () => {
  let ws: Workspace;
  let store: ObjectStore;
  let pristine: string;

  const siteSync = (more: string[] = []) => runCli(["site", "sync", "--config", ws.configFile, ...more]);
  const verify = () => runCli(["verify", "--config", ws.configFile, "--public-key", ws.key.publicKeyBase64]);
  const bytes = async (key: string) => (await store.get(key))!.body;
  const put = (key: string, body: Buffer, cacheControl = immutable) => store.put(key, body, { contentType: contentTypeFor(key), cacheControl });
  const file = (key: string) => path.join(ws.storeDir, ...key.split("/"));
  /** Rewrites the catalog's entry of `version` (the catalog only; its release.json is left as it is). */
  const editCatalog = async (version: string, edit: (entry: Record<string, unknown>) => void) => {
    const catalog = JSON.parse((await bytes(CATALOG_KEY)).toString("utf8"));
    edit(catalog.versions.find((v: { version: string }) => v.version === version));
    await put(CATALOG_KEY, Buffer.from(JSON.stringify(catalog, null, 2)), "no-cache");
  };

  beforeAll(async () => {
    ws = await makeWorkspace();
    for (const [version, build] of [["1.0.0", 100], ["1.1.0", 110]] as const) {
      const res = await runCli(ws.publishArgs(await ws.plugin(version, build), version, ["--quiet"]));
      expect(res.code, res.stderr).toBe(0);
    }
    pristine = path.join(ws.dir, "pristine-store");
    await cp(ws.storeDir, pristine, { recursive: true, verbatimSymlinks: true });
    store = await openStore("file://./store", ws.dir);
  });

  beforeEach(async () => {
    await rm(ws.storeDir, { recursive: true, force: true });
    await rm(path.join(ws.dir, "moved"), { recursive: true, force: true });
    await cp(pristine, ws.storeDir, { recursive: true, verbatimSymlinks: true });
  });

  it("a catalog entry pinning other bytes than its record: site sync and --repair refuse, naming relcast rebuild, and write nothing (latest and older release)", async () => {
    for (const version of ["1.1.0", "1.0.0"]) {
      const source = versionedKey(version, dmgFileName(ID, version));
      const tampered = damaged(await bytes(source));
      await put(source, tampered);
      await editCatalog(version, (entry) => { entry.sha256 = sha256(tampered); });
    }
    const before = await snapshotTree(ws.storeDir);
    for (const more of [[], ["--repair"], ["--repair", "--dry-run"], ["--dry-run"]]) {
      const res = await siteSync(more);
      expect(res.code, `${more.join(" ")}: ${res.stderr}`).toBe(11);
      expect(res.stderr).toContain("`relcast rebuild`");
      expect(res.stderr).toContain("catalog's entry for 1.1.0");
      expect(res.stderr).toContain("catalog's entry for 1.0.0");
    }
    expect(await snapshotTree(ws.storeDir)).toEqual(before);
  });

  it("a latest copy whose versioned source is gone: --repair refuses it (exit 11) naming the restore, and the latest state is not written", async () => {
    const source = versionedKey("1.1.0", dmgFileName(ID, "1.1.0"));
    const latest = downloadKey(latestDownloadName(ID, "dmg"));
    const stale = damaged(await bytes(latest));
    await put(latest, stale, "no-cache");
    const state = await bytes(latestDownloadStateKey(ID));
    await unlink(file(source));
    for (const more of [["--repair", "--dry-run"], ["--repair"]]) {
      const res = await siteSync(more);
      expect(res.code, res.stderr).toBe(11);
      expect(res.stderr).toContain(`${store.uriFor(source)} is missing, so ${latest} could not be written`);
      expect(res.stderr).toContain("backup");
      expect(res.stderr).not.toContain("already up to date");
    }
    expect((await bytes(latest)).equals(stale)).toBe(true);
    expect((await bytes(latestDownloadStateKey(ID))).equals(state)).toBe(true);
  });

  it("a folder where a download copy belongs: verify names it, site sync (and its dry run) fail with E_STORE naming the folder and the fix", async () => {
    const key = downloadKey(dmgFileName(ID, "1.1.0"));
    await unlink(file(key));
    await mkdir(path.join(file(key), "sub"), { recursive: true });
    await writeFile(path.join(file(key), "sub", "x"), "x");
    const checked = await verify();
    expect(checked.code).toBe(11);
    const line = checked.stdout.split("\n").find((l) => l.includes(key));
    expect(line, checked.stdout).toContain("a folder");
    expect(line).toContain("where an object belongs");
    expect(line).not.toContain(`${key} is missing`);
    for (const more of [["--dry-run"], []]) {
      const res = await siteSync(more);
      expect(res.code, res.stderr).toBe(9);
      expect(res.stderr).toContain(`${file(key)} is a folder`);
      expect(res.stderr).toContain("remove that folder");
    }
  });

  it("downloads/ a link to a folder outside the store: the dry run fails as the real run does; a missing copy is labelled missing", async () => {
    const zip = downloadKey(zipFileName(ID, "1.0.0"));
    await unlink(file(zip));
    const dry = await siteSync(["--repair", "--dry-run"]);
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stderr).toMatch(new RegExp(`would copy \\S+ to ${zip.replace(/[.]/g, "\\.")} \\([^)]*missing\\)`));
    expect(dry.stderr).not.toMatch(new RegExp(`to ${zip.replace(/[.]/g, "\\.")} \\([^)]*bytes differ`));

    await rename(path.join(ws.storeDir, "downloads"), path.join(ws.dir, "moved"));
    await symlink(path.join(ws.dir, "moved"), path.join(ws.storeDir, "downloads"));
    const preview = await siteSync(["--dry-run"]);
    const real = await siteSync();
    expect(real.code, real.stderr).toBe(9);
    expect(preview.code, preview.stderr).toBe(real.code);
    expect(preview.stderr).toContain("would fail:");
    expect(preview.stderr).toContain("symbolic link");
  });

  it("releases/latest/ holding a name that is no release's copy: verify names the fix, and site sync removes it", async () => {
    const evil = `${LATEST_PREFIX}${ID}-1.1.0+evil.dmg`;
    await writeFile(file(evil), await bytes(versionedKey("1.1.0", dmgFileName(ID, "1.1.0"))));
    const before = await verify();
    const line = before.stdout.split("\n").find((l) => l.includes(evil));
    expect(line, before.stdout).toContain("relcast site sync");
    const res = await siteSync();
    expect(res.code, res.stderr).toBe(0);
    expect(await store.head(evil)).toBeUndefined();
    const after = await verify();
    expect(after.code, after.stdout).toBe(0);
  });

  it("copy and source both damaged: verify names the backup restore for that copy, not --repair alone", async () => {
    const name = zipFileName(ID, "1.0.0");
    const good = await bytes(versionedKey("1.0.0", name));
    await put(versionedKey("1.0.0", name), damaged(good));
    await put(downloadKey(name), Buffer.concat([good.subarray(0, 1).map((x) => x ^ 1), good.subarray(1)]));
    const res = await verify();
    expect(res.code).toBe(11);
    const line = res.stdout.split("\n").find((l) => l.startsWith(downloadKey(name)) || l.includes(`${downloadKey(name)} has SHA-256`));
    expect(line, res.stdout).toContain(`restore ${versionedKey("1.0.0", name)} from a backup`);
  });

  it("site build --repair rewrites a same-size damaged download in the out folder, which a plain build leaves", async () => {
    const out = path.join(ws.dir, "out");
    await rm(out, { recursive: true, force: true });
    const build = (more: string[] = []) => runCli(["site", "build", "--config", ws.configFile, "--out", out, ...more]);
    expect((await build()).code).toBe(0);
    const name = zipFileName(ID, "1.0.0");
    const target = path.join(out, "downloads", name);
    const good = await readFile(target);
    await writeFile(target, damaged(good));
    expect((await build()).code).toBe(0);
    expect((await readFile(target)).equals(damaged(good))).toBe(true);
    const repaired = await build(["--repair"]);
    expect(repaired.code, repaired.stderr).toBe(0);
    expect((await readFile(target)).equals(good)).toBe(true);
    await rm(out, { recursive: true, force: true });
  });
});

const reason = motoUnavailableReason();

describe.skipIf(Boolean(reason))("site sync --repair on S3: a copy with the right bytes and headers relcast does not write", () => {
  let moto: MotoServer;
  let probe: S3Probe;
  let ws: Workspace;
  const bucket = `trust-${randomBytes(3).toString("hex")}`;

  beforeAll(async () => {
    moto = await startMotoServer();
    await fetch(`${moto.endpoint}/${bucket}`, { method: "PUT" });
    ws = await makeWorkspace({ store: `s3://${bucket}/site`, s3: { endpoint: moto.endpoint, forcePathStyle: true, region: "us-east-1" } });
    const res = await runCli(ws.publishArgs(await ws.plugin("1.0.0", 100), "1.0.0", ["--quiet"]));
    expect(res.code, res.stderr).toBe(0);
    probe = startS3Probe(moto.endpoint);
  });

  afterAll(async () => {
    await probe?.close();
    await moto?.stop();
  });

  it("each such copy is rewritten as relcast writes it, with the same bytes", async () => {
    const planted: Array<{ key: string; headers: Record<string, string>; cache: string }> = [
      { key: downloadKey(dmgFileName(ID, "1.0.0")), headers: { WebsiteRedirectLocation: "https://evil.example/x.dmg" }, cache: immutable },
      { key: downloadKey(zipFileName(ID, "1.0.0")), headers: { ContentEncoding: "gzip" }, cache: immutable },
      { key: downloadKey(latestDownloadName(ID, "dmg")), headers: { ContentDisposition: "attachment; filename=evil.command" }, cache: "no-cache" },
      { key: downloadKey(latestDownloadName(ID, "zip")), headers: { ContentType: "text/html" }, cache: "no-cache" },
    ];
    const etagBefore = new Map<string, string>();
    for (const { key, headers, cache } of planted) {
      const Key = `site/${key}`;
      await probe.call("copy_object", { Bucket: bucket, Key, CopySource: { Bucket: bucket, Key }, MetadataDirective: "REPLACE", ContentType: contentTypeFor(key), CacheControl: cache, ...headers });
      const head = await probe.call<Record<string, unknown>>("head_object", { Bucket: bucket, Key });
      for (const [name, value] of Object.entries(headers)) expect(head[name], `${key} ${name}`).toBe(value);
      etagBefore.set(key, String(head.ETag));
    }
    const res = await runCli(["site", "sync", "--repair", "--config", ws.configFile]);
    expect(res.code, res.stderr).toBe(0);
    for (const { key, headers } of planted) {
      const head = await probe.call<Record<string, unknown>>("head_object", { Bucket: bucket, Key: `site/${key}` });
      expect(head.ContentType, key).toBe(contentTypeFor(key));
      for (const name of Object.keys(headers)) if (name !== "ContentType") expect(head[name], `${key} ${name}`).toBeUndefined();
      expect(head.ETag, `${key}: same bytes`).toBe(etagBefore.get(key));
    }
    const again = await runCli(["site", "sync", "--repair", "--config", ws.configFile]);
    expect(again.stderr).toContain("already up to date");
  });
});
