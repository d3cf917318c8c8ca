import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openStore } from "../../src/store/open-store.js";
import { motoUnavailableReason, startMotoServer, type MotoServer } from "../helpers/moto-server.js";
import { killAtRandom, randomKillsSeed } from "../helpers/random-kills.js";
import { runCli } from "../helpers/run-cli.js";
import { makeWorkspace } from "../helpers/workspace.js";

const MiB = 1 << 20;
const reason = motoUnavailableReason();

describe.skipIf(Boolean(reason))(`SIGKILL at random moments, then the same command again (S3 store, moto)${reason ? ` — skipped: ${reason}` : ""}`, () => {
  let moto: MotoServer | undefined;
  beforeAll(async () => {
    moto = await startMotoServer();
  });
  afterAll(async () => {
    await moto?.stop();
  });

  it("SIGKILL during uploads; feeds stay consistent, re-runs complete, gc aborts orphaned multipart uploads", async () => {
    const bucket = `rkill-${randomBytes(3).toString("hex")}`;
    // 12 MiB in 5 MiB parts: three parts, as many as the 24 MiB in 8 MiB parts this once used, at half the bytes.
    const s3 = { endpoint: moto!.endpoint, forcePathStyle: true, region: "us-east-1" };
    const ws = await makeWorkspace({ store: `s3://${bucket}/site`, s3: { ...s3, partSizeMiB: 5 } });
    const store = await openStore(`s3://${bucket}/site`, ws.dir, { s3 });
    await fetch(`${moto!.endpoint}/${bucket}`, { method: "PUT" });
    await killAtRandom(ws, store, { label: "s3", runs: 4, dmgBytes: 12 * MiB, seed: randomKillsSeed() });
    const gc = await runCli(["gc", "--config", ws.configFile, "--older-than", "0"]);
    expect(gc.code, gc.stderr).toBe(0);
    const uploads = await fetch(`${moto!.endpoint}/${bucket}?uploads`).then((res) => res.text());
    expect(uploads).not.toMatch(/<Upload>/);
  }, 900_000); // a hang guard, not a speed check: a loaded shared machine makes each S3 publish slow
});
