import { randomBytes } from "node:crypto";
import { rm } from "node:fs/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startFaultProxy, type FaultProxy, type RequestInfo } from "../helpers/fault-proxy.js";
import { motoUnavailableReason, startMotoServer, type MotoServer } from "../helpers/moto-server.js";
import { runCli, startCli } from "../helpers/run-cli.js";
import { bucketReader } from "../helpers/moto-http.js";
import { makeWorkspace, type Workspace } from "../helpers/workspace.js";

const reason = motoUnavailableReason();
const MiB = 1 << 20;

/**
 * Issue 33 item 4: a run leaves no multipart upload behind, however it
 * stops. Publishes go through a proxy in front of moto with 5 MiB parts, so
 * a disk image of 10 MiB and a byte is a three-part upload (the last part
 * short) the proxy can hold in flight.
 */
describe.skipIf(Boolean(reason))(`an interrupted or failing S3 publish leaves no upload behind (moto)${reason ? ` — skipped: ${reason}` : ""}`, () => {
  let moto: MotoServer;
  let proxy: FaultProxy;
  const made: Workspace[] = [];
  beforeAll(async () => {
    moto = await startMotoServer();
    proxy = await startFaultProxy(moto.endpoint, { rate: 0, seed: 2 });
  });
  afterAll(async () => {
    await proxy?.stop();
    await moto?.stop();
    for (const ws of made) await rm(ws.dir, { recursive: true, force: true });
  });

  async function setup(): Promise<{ ws: Workspace; bucket: string }> {
    const bucket = `mpu-${randomBytes(3).toString("hex")}`;
    await fetch(`${moto.endpoint}/${bucket}`, { method: "PUT" });
    const ws = await makeWorkspace({ store: `s3://${bucket}/site`, s3: { forcePathStyle: true, region: "us-east-1", endpoint: proxy.endpoint, partSizeMiB: 5 } });
    made.push(ws);
    return { ws, bucket };
  }
  // Read straight from moto over HTTP, past the proxy (and past relcast's store code).
  const multipartUploads = async (bucket: string) => (await bucketReader(moto.endpoint, bucket).uploads()).map((u) => u.Key);
  const isDmgPart = (r: RequestInfo) => r.method === "PUT" && /[?&]partNumber=\d+/.test(r.url) && r.url.split("?")[0]!.endsWith(".dmg");

  it.each([["SIGINT", 130], ["SIGTERM", 143]] as const)("%s while the disk image's parts are in flight: exit %i, says so, and ListMultipartUploads is empty", async (signal, exit) => {
    const { ws, bucket } = await setup();
    const p = await ws.plugin("2.0.0", 200, { dmgBytes: 10 * MiB + 1 });
    // Every part of the disk image is held by the proxy, unanswered: the upload is in flight until the signal.
    proxy.target({ name: `hold parts ${signal}`, match: isDmgPart, fault: "stall", times: 1000 });
    try {
      const run = startCli(ws.publishArgs(p, "2.0.0"));
      await proxy.waitFor(isDmgPart);
      run.child.kill(signal);
      const res = await run.done;
      expect(await multipartUploads(bucket), res.stderr).toEqual([]);
      expect(res.code, res.stderr).toBe(exit);
      // The disk image's parts go out while the bundle is zipped (the upload step only completes the object): the signal
      // may come in any step up to the upload, and nothing is public.
      expect(res.stderr).toMatch(new RegExp(`relcast: interrupted by ${signal} in step (zip|sign|deltas|plan|upload); nothing became public`));
      expect(res.stderr).toMatch(/relcast: aborted the multipart upload of site\/releases\/2\.0\.0\/bridge-plugin-2\.0\.0\.dmg/);
    } finally {
      proxy.clearTargets();
    }
    expect(await multipartUploads(bucket)).toEqual([]);
  }, 300_000); // a hang guard, not a speed check

  it("a part that keeps failing, and the upload's own abort lost too: the failing run still aborts its upload before it exits", async () => {
    const { ws, bucket } = await setup();
    const p = await ws.plugin("3.0.0", 300, { dmgBytes: 10 * MiB + 1 });
    proxy.target({ name: "part 2 fails", match: (r) => isDmgPart(r) && /[?&]partNumber=2(&|$)/.test(r.url), fault: "500", times: 1000 });
    // The SDK tries each request 5 times: the upload's own AbortMultipartUpload never gets through.
    proxy.target({ name: "first abort lost", match: (r) => r.method === "DELETE" && /[?&]uploadId=/.test(r.url), fault: "drop", times: 5 });
    try {
      const res = await runCli(ws.publishArgs(p, "3.0.0", ["--quiet"]));
      expect(res.code, res.stderr).toBe(9);
      expect(proxy.stats.targeted["first abort lost"]).toBe(5);
    } finally {
      proxy.clearTargets();
    }
    expect(await multipartUploads(bucket)).toEqual([]);
  }, 300_000);
});
