import { createHash } from "node:crypto";
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { motoUnavailableReason, startMotoServer, type MotoServer } from "../helpers/moto-server.js";
import { runCli } from "../helpers/run-cli.js";
import { typicalIcns } from "../helpers/icns-bytes.js";
import { makeWorkspace, type Workspace } from "../helpers/workspace.js";
import { openStore } from "../../src/store/open-store.js";
import type { ObjectStore } from "../../src/store/object-store.js";
import { contentTypeFor } from "../../src/store/content-types.js";
import { deltaFileName, downloadKey, iconKey, LATEST_PREFIX, latestDownloadName, versionedKey, zipFileName } from "../../src/domain/release-layout.js";

/**
 * Every public copy relcast writes of a release's own object (the download
 * copies, a delta, an icon, `releases/latest/`, the stable latest downloads),
 * damaged with bytes of the same size: verify names each with a fix, the
 * command it names puts the record's bytes back from the hash-checked source,
 * and verify passes again. A damaged source is refused; a dry run writes nothing.
 */
const reason = motoUnavailableReason();
const sha256 = (b: Buffer) => createHash("sha256").update(b).digest("hex");
/** Same size, other bytes: the last 32 bytes inverted (inside the zip's central directory, the PNG's IEND, …). */
const damaged = (b: Buffer) => Buffer.concat([b.subarray(0, b.length - 32), Buffer.from(b.subarray(b.length - 32).map((x) => x ^ 0xff))]);
const fixOf = (line: string) => /`(relcast site sync(?: --repair)?)`/.exec(line)?.[1];

describe.each([["folder store", false], ["S3 (moto_server)", true]] as const)("public copies with damaged bytes on a %s", (_name, useS3) => {
  const skip = useS3 && Boolean(reason);
  let moto: MotoServer | undefined;
  let ws: Workspace;
  let store: ObjectStore;
  let records: Map<string, Record<string, any>>;

  const verify = (more: string[] = []) => runCli(["verify", "--config", ws.configFile, "--public-key", ws.key.publicKeyBase64, ...more]);
  const siteSync = (more: string[] = []) => runCli(["site", "sync", "--config", ws.configFile, ...more]);
  /** Puts bytes as relcast writes that key (same Content-Type and Cache-Control), so only the bytes differ. */
  const put = (key: string, body: Buffer) => store.put(key, body, { contentType: contentTypeFor(key), cacheControl: key.startsWith(LATEST_PREFIX) || key.includes("-latest.") ? "no-cache" : "public, max-age=31536000, immutable" });
  const bytes = async (key: string) => (await store.get(key))!.body;
  const listing = async () => {
    const out: string[] = [];
    for await (const m of store.list("")) out.push(`${m.key} ${m.etag} ${m.size}`);
    return out;
  };

  beforeAll(async () => {
    if (skip) return;
    const config: Record<string, unknown> = { deltas: { maximum: 1 } };
    let bucket: string | undefined;
    if (useS3) {
      moto = await startMotoServer();
      bucket = `repair-${randomBytes(3).toString("hex")}`;
      await fetch(`${moto.endpoint}/${bucket}`, { method: "PUT" });
      Object.assign(config, { store: `s3://${bucket}/site`, s3: { endpoint: moto.endpoint, forcePathStyle: true, region: "us-east-1" } });
    }
    ws = await makeWorkspace(config);
    records = new Map();
    for (const [version, build] of [["1.0.0", 100], ["1.1.0", 110]] as const) {
      const p = await ws.plugin(version, build, { icon: { file: "AppIcon.icns", bytes: typicalIcns() } });
      const res = await runCli(ws.publishArgs(p, version, ["--json"]));
      expect(res.code, res.stderr).toBe(0);
      records.set(version, JSON.parse(res.stdout));
    }
    store = useS3
      ? await openStore(`s3://${bucket}/site`, ws.dir, { s3: { endpoint: moto!.endpoint, forcePathStyle: true, region: "us-east-1" } })
      : await openStore("file://./store", ws.dir);
  });

  afterAll(async () => {
    await store?.close?.();
    await moto?.stop();
  });

  /** Each kind of public copy, with the bytes its record pins. */
  const copies = () => {
    const r = records.get("1.1.0")!;
    const delta = deltaFileName("bridge-plugin", "1.1.0", "1.0.0");
    expect(r.autoupdate.deltas.map((d: { fromVersion: string }) => d.fromVersion)).toEqual(["1.0.0"]);
    return [
      { key: downloadKey(r.objectStore.artifactFileName), sha: r.sha256 },
      { key: downloadKey(zipFileName("bridge-plugin", "1.0.0")), sha: records.get("1.0.0")!.autoupdate.sha256 },
      { key: downloadKey(delta), sha: r.autoupdate.deltas[0].sha256 },
      { key: iconKey(r.icon.fileName), sha: r.icon.sha256 },
      { key: `${LATEST_PREFIX}${zipFileName("bridge-plugin", "1.1.0")}`, sha: r.autoupdate.sha256 },
      { key: downloadKey(latestDownloadName("bridge-plugin", "dmg")), sha: r.sha256 },
    ];
  };

  it.skipIf(skip)("verify names every damaged copy with the command that repairs it; that command rewrites each from its release's object, and verify passes", async () => {
    expect((await verify()).code).toBe(0);
    const kinds = copies();
    for (const { key } of kinds) await put(key, damaged(await bytes(key)));
    const before = await verify();
    expect(before.code, before.stdout).toBe(11);
    const named = new Map<string, string | undefined>();
    for (const { key } of kinds) {
      const line = before.stdout.split("\n").find((l) => l.includes(key) && fixOf(l));
      expect(line, `${key} named with a fix in:\n${before.stdout}`).toBeDefined();
      named.set(key, fixOf(line!));
    }
    // The download, delta and icon copies need the repair mode (a plain sync judges them by size, and they are
    // the right size); the latest copies, judged by their bytes on every sync, name plain `site sync`.
    expect(named.get(kinds[0]!.key)).toBe("relcast site sync --repair");
    expect(named.get(kinds[2]!.key)).toBe("relcast site sync --repair");
    expect(named.get(kinds[3]!.key)).toBe("relcast site sync --repair");
    expect(named.get(kinds[4]!.key)).toBe("relcast site sync");
    expect(named.get(kinds[5]!.key)).toBe("relcast site sync");

    const plain = await siteSync();
    expect(plain.code, plain.stderr).toBe(0);
    for (const { key, sha } of kinds) {
      const repaired = sha256(await bytes(key)) === sha;
      expect(repaired, key).toBe(named.get(key) === "relcast site sync");
    }
    const repair = await siteSync(["--repair"]);
    expect(repair.code, repair.stderr).toBe(0);
    for (const { key, sha } of kinds) expect(sha256(await bytes(key)), key).toBe(sha);
    const after = await verify();
    expect(after.code, after.stdout + after.stderr).toBe(0);
    // Nothing left to do: a second repair writes nothing.
    const again = await siteSync(["--repair"]);
    expect(again.stderr).toContain("already up to date");
  });

  it.skipIf(skip)("a dry run names what --repair would rewrite and writes nothing", async () => {
    const key = downloadKey(zipFileName("bridge-plugin", "1.1.0"));
    const good = await bytes(key);
    await put(key, damaged(good));
    const listed = await listing();
    const dry = await siteSync(["--repair", "--dry-run"]);
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stderr).toContain(`would copy ${versionedKey("1.1.0", zipFileName("bridge-plugin", "1.1.0"))} to ${key}`);
    expect(dry.stderr).toContain("nothing was written");
    expect(await listing()).toEqual(listed);
    expect((await bytes(key)).equals(damaged(good))).toBe(true);
    expect((await siteSync(["--repair"])).code).toBe(0);
    expect((await bytes(key)).equals(good)).toBe(true);
  });

  it.skipIf(skip)("refuses to copy from a release's object that no longer holds the record's bytes, naming it, and writes nothing for that copy", async () => {
    const name = zipFileName("bridge-plugin", "1.0.0");
    const source = versionedKey("1.0.0", name);
    const copy = downloadKey(name);
    const good = await bytes(source);
    const badSource = damaged(good);
    const badCopy = Buffer.concat([good.subarray(0, 1).map((x) => x ^ 0x01), good.subarray(1)]);
    await put(source, badSource);
    await put(copy, badCopy);
    try {
      const res = await siteSync(["--repair"]);
      expect(res.code, res.stderr).toBe(11);
      expect(res.stderr).toContain(`${store.uriFor(source)} has SHA-256`);
      expect(res.stderr).toContain(`so ${copy} was not rewritten from it`);
      expect((await bytes(copy)).equals(badCopy)).toBe(true);
      const dry = await siteSync(["--repair", "--dry-run"]);
      expect(dry.stderr).toContain(`would refuse: ${store.uriFor(source)}`);
      expect(dry.stderr).not.toContain(`to ${copy}`);
    } finally {
      await put(source, good);
      await put(copy, good);
    }
    const res = await verify();
    expect(res.code, res.stdout).toBe(0);
  });
});

describe("verify's inventory lines", () => {
  let ws: Workspace;
  let store: ObjectStore;

  beforeAll(async () => {
    ws = await makeWorkspace();
    for (const [version, build] of [["1.0.0", 100], ["1.1.0", 110]] as const) {
      const res = await runCli(ws.publishArgs(await ws.plugin(version, build), version, ["--quiet"]));
      expect(res.code, res.stderr).toBe(0);
    }
    store = await openStore("file://./store", ws.dir);
  });

  it("--json names every stray object (the human report the first four and how many more)", async () => {
    const strays = Array.from({ length: 7 }, (_, i) => `downloads/bridge-plugin-stray-${i}.zip`);
    for (const key of strays) await store.put(key, Buffer.from("x"), { contentType: "application/zip" });
    try {
      const json = await runCli(["verify", "--config", ws.configFile, "--json"]);
      expect(json.code).toBe(11);
      const report = JSON.parse(json.stdout);
      const line = (report.site.problems as string[]).find((p) => p.startsWith("7 public object(s)"));
      expect(line, json.stdout).toBeDefined();
      for (const key of strays) expect(line).toContain(key);
      expect(line).not.toContain("more");
      const text = await runCli(["verify", "--config", ws.configFile]);
      expect(text.stdout).toContain("and 3 more");
      expect(text.stdout).not.toContain(strays[6]);
    } finally {
      for (const key of strays) await store.delete(key);
    }
  });

  it("a damaged release object is named in its row, not blamed on its right latest copy; --repair leaves the right copies alone", async () => {
    const key = versionedKey("1.1.0", "bridge-plugin-1.1.0.dmg");
    const good = (await store.get(key))!.body;
    // A put replaces the file: the copies (hard links to the old file) keep the record's bytes.
    await store.put(key, damaged(good), { contentType: "application/x-apple-diskimage" });
    try {
      const res = await runCli(["verify", "--config", ws.configFile]);
      expect(res.code).toBe(11);
      expect(res.stdout).toContain(`1.1.0: disk image ${key} has SHA-256`);
      expect(res.stdout).toContain("latest: 1.1.0 ok");
      const repair = await runCli(["site", "sync", "--config", ws.configFile, "--repair"]);
      expect(repair.code, repair.stderr).toBe(0);
      expect(repair.stderr).toContain("already up to date");
    } finally {
      await store.put(key, good, { contentType: "application/x-apple-diskimage" });
    }
  });

  it("an archive page on a site that has none is named without a range of pages 1 to 0", async () => {
    await store.put("changelog-1.html", Buffer.from("<html></html>"), { contentType: "text/html; charset=utf-8" });
    try {
      const res = await runCli(["verify", "--config", ws.configFile]);
      expect(res.code).toBe(11);
      expect(res.stdout).not.toContain("1 to 0");
      expect(res.stdout).toContain("changelog-1.html is not an archive page: releases/catalog.json lists 2 release(s), and archive pages start past 50, so the site has none");
    } finally {
      await store.delete("changelog-1.html");
    }
  });
});
