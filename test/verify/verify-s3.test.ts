import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { motoUnavailableReason, startMotoServer, type MotoServer } from "../helpers/moto-server.js";
import { runCli } from "../helpers/run-cli.js";
import { makeWorkspace, type Workspace } from "../helpers/workspace.js";
import { openStore } from "../../src/store/open-store.js";
import type { ObjectStore } from "../../src/store/object-store.js";

const reason = motoUnavailableReason();

describe.skipIf(Boolean(reason))(`relcast verify on S3 (moto_server)${reason ? ` — skipped: ${reason}` : ""}`, () => {
  let moto: MotoServer;
  let ws: Workspace;
  let store: ObjectStore;

  beforeAll(async () => {
    moto = await startMotoServer();
    const bucket = `verify-${randomBytes(4).toString("hex")}`;
    const s3 = { endpoint: moto.endpoint, forcePathStyle: true, region: "us-east-1" };
    ws = await makeWorkspace({ store: `s3://${bucket}/plugins`, s3 });
    // Made over plain HTTP, as the other S3 tests make theirs: an aws cli start cost seconds on a loaded machine.
    const made = await fetch(`${moto.endpoint}/${bucket}`, { method: "PUT" });
    expect(made.ok, `create bucket: HTTP ${made.status}`).toBe(true);
    for (const [version, build, flags] of [["1.0.0", 100, []], ["1.1.0", 110, ["--critical"]], ["1.0.1", 105, []]] as Array<[string, number, string[]]>) {
      const res = await runCli(ws.publishArgs(await ws.plugin(version, build), version, [...flags, "--quiet"]));
      expect(res.code, res.stderr).toBe(0);
    }
    store = await openStore(`s3://${bucket}/plugins`, ws.dir, { s3 });
  });

  afterAll(async () => {
    await store?.close?.();
    await moto?.stop();
  });

  it("passes the store three publishes wrote", async () => {
    const res = await runCli(["verify", "--config", ws.configFile, "--public-key", ws.key.publicKeyBase64]);
    expect(res.code, res.stdout + res.stderr).toBe(0);
    expect(res.stdout).toContain("3 release(s) verified, no problems");
    expect(res.stdout).toContain("latest: 1.1.0 ok");
  });

  it("fails a version folder holding a disk image but no record (an upload stopped before its record), naming it, from the bucket's listing", async () => {
    const dmg = await store.get("releases/1.0.0/bridge-plugin-1.0.0.dmg");
    await store.put("releases/2.0.0/bridge-plugin-2.0.0.dmg", dmg!.body, { contentType: "application/x-apple-diskimage" });
    try {
      const res = await runCli(["verify", "--config", ws.configFile, "--public-key", ws.key.publicKeyBase64]);
      expect(res.code, res.stdout + res.stderr).toBe(11);
      expect(res.stdout).toContain("feed: releases/2.0.0/ holds 1 object(s) (bridge-plugin-2.0.0.dmg) but no record, and the catalog does not list 2.0.0");
    } finally {
      await store.delete("releases/2.0.0/bridge-plugin-2.0.0.dmg");
    }
  });

  it("fails an object at the site's root and one under a public folder that relcast did not write, naming both; passes again once they are deleted", async () => {
    const strays = ["evil.html", "downloads/.relcast-tmp-1-x"];
    for (const key of strays) await store.put(key, Buffer.from("<script>steal()</script>"), { contentType: "text/html" });
    try {
      const res = await runCli(["verify", "--config", ws.configFile, "--public-key", ws.key.publicKeyBase64]);
      expect(res.code, res.stdout + res.stderr).toBe(11);
      expect(res.stdout).toMatch(/site: 2 object\(s\) on the public site that relcast did not write for bridge-plugin \("downloads\/\.relcast-tmp-1-x", evil\.html\): .*delete them/);
    } finally {
      for (const key of strays) await store.delete(key);
    }
    const res = await runCli(["verify", "--config", ws.configFile, "--public-key", ws.key.publicKeyBase64]);
    expect(res.code, res.stdout + res.stderr).toBe(0);
  });

  it("fails a public appcast with one sparkle:version changed and a deleted index.html (what installed copies and people read)", async () => {
    const appcastKey = "api/v1/plugins/bridge-plugin/appcast.xml";
    const [appcast, index] = await Promise.all([store.get(appcastKey), store.get("index.html")]);
    const xml = appcast!.body.toString("utf8");
    const damaged = xml.replace("<sparkle:version>100</sparkle:version>", "<sparkle:version>999</sparkle:version>");
    expect(damaged).not.toBe(xml);
    await store.put(appcastKey, damaged, { contentType: "application/xml", cacheControl: "no-cache" });
    await store.delete("index.html");
    try {
      const res = await runCli(["verify", "--config", ws.configFile, "--public-key", ws.key.publicKeyBase64]);
      expect(res.code, res.stdout + res.stderr).toBe(11);
      expect(res.stdout).toMatch(/site: api\/v1\/plugins\/bridge-plugin\/appcast\.xml: 1\.0\.0: appcast sparkle:version is "999" but the catalog says "100"/);
      expect(res.stdout).toMatch(/site: index\.html is missing/);
      expect(res.stderr).toMatch(/verify found problems in site/);
    } finally {
      // Put back with the headers relcast writes (verify compares them too).
      await store.put(appcastKey, appcast!.body, { contentType: "application/xml", cacheControl: "no-cache" });
      await store.put("index.html", index!.body, { contentType: "text/html; charset=utf-8", cacheControl: "no-cache" });
    }
    const again = await runCli(["verify", "--config", ws.configFile, "--public-key", ws.key.publicKeyBase64]);
    expect(again.code, again.stdout + again.stderr).toBe(0);
  });

  it("names the release whose zip was overwritten with other bytes, and a latest copy that went stale", async () => {
    const key = "releases/1.0.0/bridge-plugin-1.0.0.zip";
    const original = (await store.get(key))!.body;
    const damaged = Buffer.from(original);
    damaged.write("DAMAGED!", 1500);
    await store.put(key, damaged, { contentType: "application/zip", cacheControl: "public, max-age=31536000, immutable" });
    await store.put("releases/latest/bridge-plugin-1.1.0.dmg", "stale", { contentType: "application/x-apple-diskimage", cacheControl: "no-cache" });
    const res = await runCli(["verify", "--config", ws.configFile, "--public-key", ws.key.publicKeyBase64]);
    expect(res.code, res.stdout + res.stderr).toBe(11);
    expect(res.stdout).toMatch(/1\.0\.0: update zip releases\/1\.0\.0\/bridge-plugin-1\.0\.0\.zip has SHA-256/);
    expect(res.stdout).toMatch(/1\.0\.0: edSignature does not verify/);
    expect(res.stdout).toMatch(/latest: releases\/latest\/bridge-plugin-1\.1\.0\.dmg differs from releases\/1\.1\.0\/bridge-plugin-1\.1\.0\.dmg/);
    expect(res.stderr).toMatch(/verify found problems in latest, 1\.0\.0/);
  });
});
