import { createHash, randomBytes } from "node:crypto";
import { readFile, rm, stat, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { motoUnavailableReason, startMotoServer, type MotoServer } from "../helpers/moto-server.js";
import { runCli } from "../helpers/run-cli.js";
import { bucketReader, type BucketReader } from "../helpers/moto-http.js";
import { makeWorkspace, type Workspace } from "../helpers/workspace.js";

const reason = motoUnavailableReason();
const MiB = 1 << 20;
const PART = 5 * MiB;

/**
 * Issue 37 item 2: on S3 the disk image's upload starts while the bundle is
 * zipped and the zip's as soon as it is signed, but each object comes into
 * being only in the upload step (CompleteMultipartUpload, create-only). A
 * publish killed just before the upload step shows it: both uploads are open
 * with every part sent, and no object exists under releases/. Checked over
 * plain HTTP straight from moto, never with relcast's own store code.
 */
describe.skipIf(Boolean(reason))(`S3: uploads start before the upload step and complete only in it (moto)${reason ? ` — skipped: ${reason}` : ""}`, () => {
  let moto: MotoServer;
  let ws: Workspace;
  const bucket = `early-${randomBytes(3).toString("hex")}`;
  let s3: BucketReader;
  beforeAll(async () => {
    moto = await startMotoServer();
    await fetch(`${moto.endpoint}/${bucket}`, { method: "PUT" });
    s3 = bucketReader(moto.endpoint, bucket);
    ws = await makeWorkspace({ store: `s3://${bucket}/site`, s3: { forcePathStyle: true, region: "us-east-1", endpoint: moto.endpoint, partSizeMiB: 5 } });
  });
  afterAll(async () => {
    await moto?.stop();
    if (ws) await rm(ws.dir, { recursive: true, force: true });
  });

  it("killed before the upload step: disk image and zip are open uploads with every part sent, no object exists; gc aborts them; a re-run stores the local bytes", async () => {
    const p = await ws.plugin("1.0.0", 100, { dmgBytes: 12 * MiB });
    // Incompressible, so the zip is two parts too.
    await writeFile(path.join(p.app, "Contents", "Resources", "weights.bin"), randomBytes(7 * MiB));
    const killed = await runCli(ws.publishArgs(p, "1.0.0", ["--quiet"]), { env: { RELCAST_FAILPOINT: "before:upload" } });
    expect(killed.signal, killed.stderr).toBe("SIGKILL");

    const uploads = await s3.uploads();
    expect(uploads.map((u) => u.Key).sort()).toEqual(["site/releases/1.0.0/bridge-plugin-1.0.0.dmg", "site/releases/1.0.0/bridge-plugin-1.0.0.zip"]);
    const dmgSize = (await stat(p.dmg)).size;
    for (const u of uploads) {
      const parts = await s3.parts(u.Key, u.UploadId);
      const total = parts.reduce((sum, part) => sum + part.Size, 0);
      expect(parts.map((part) => part.PartNumber)).toEqual(Array.from({ length: Math.ceil(total / PART) }, (_, i) => i + 1));
      if (u.Key.endsWith(".dmg")) expect(total).toBe(dmgSize);
      else expect(total).toBeGreaterThan(7 * MiB);
    }
    expect(await s3.objects("site/releases/")).toEqual([]);

    const gc = await runCli(["gc", "--config", ws.configFile, "--older-than", "0"]);
    expect(gc.code, gc.stderr).toBe(0);
    expect(await s3.uploads()).toEqual([]);

    const again = await runCli(ws.publishArgs(p, "1.0.0", ["--quiet"]));
    expect(again.code, again.stderr).toBe(0);
    expect(await s3.uploads()).toEqual([]);
    expect(await s3.sha256("site/releases/1.0.0/bridge-plugin-1.0.0.dmg")).toBe(createHash("sha256").update(await readFile(p.dmg)).digest("hex"));
    const head = await s3.head("site/releases/1.0.0/bridge-plugin-1.0.0.zip");
    expect(head.ContentType).toBe("application/zip");
    expect(head.CacheControl).toMatch(/immutable/);
    const record = JSON.parse(await s3.text("site/releases/1.0.0/release.json"));
    expect(head.ContentLength).toBe(record.autoupdate.sizeBytes);
    const verify = await runCli(["verify", "--config", ws.configFile, "--public-key", ws.key.publicKeyBase64]);
    expect(verify.code, verify.stderr + verify.stdout).toBe(0);
  }, 300_000); // a hang guard, not a speed check

  it("Ctrl-C as the upload step begins: no write starts after the signal, every staged upload not yet completing is aborted, and the message names exactly what is in the store; a re-run finishes", async () => {
    const p = await ws.plugin("2.0.0", 200, { dmgBytes: 12 * MiB });
    await writeFile(path.join(p.app, "Contents", "Resources", "weights.bin"), randomBytes(7 * MiB));
    expect(await s3.objects("site/releases/2.0.0/")).toEqual([]);
    const stopped = await runCli(ws.publishArgs(p, "2.0.0"), { env: { RELCAST_FAILPOINT: "after:plan", RELCAST_FAILPOINT_SIGNAL: "SIGINT" } });
    expect(stopped.code, stopped.stderr).toBe(130);
    // A Complete already sent when the signal came cannot be taken back: the message then names that object. Whatever
    // the timing, the store holds exactly what the message says, no record, and no open upload.
    const objects = (await s3.objects("site/releases/2.0.0/")).map((o) => o.Key).sort();
    const named = [...stopped.stderr.matchAll(/relcast: (\S+) was being completed when the run stopped: that object is in the store/g)].map((m) => m[1]).sort();
    expect(objects).toEqual(named);
    expect(objects.every((k) => !k.endsWith("release.json"))).toBe(true);
    expect(stopped.stderr).toMatch(
      objects.length === 0
        ? /interrupted by SIGINT in step (plan|upload); nothing became public and nothing was written to the store/
        : new RegExp(`interrupted by SIGINT in step upload; nothing became public: ${objects.length} object\\(s\\) of 2\\.0\\.0 were uploaded`),
    );
    expect(await s3.uploads()).toEqual([]);
    // A re-run finishes the release.
    const again = await runCli(ws.publishArgs(p, "2.0.0", ["--quiet"]));
    expect(again.code, again.stderr).toBe(0);
  }, 300_000); // a hang guard, not a speed check
});
