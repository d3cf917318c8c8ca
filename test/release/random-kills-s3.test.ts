import { describe, expect, it } from "vitest";
import { motoUnavailableReason } from "../helpers/moto-server.js";
import { s3Workspace, useMotoServer } from "../helpers/s3-workspace.js";
import { killAtRandom, randomKillsSeed } from "../helpers/random-kills.js";
import { runCli } from "../helpers/run-cli.js";
import { bucketReader } from "../helpers/moto-http.js";

const MiB = 1 << 20;
const reason = motoUnavailableReason();

describe.skipIf(Boolean(reason))(`SIGKILL at random moments, then the same command again (S3 store, moto)${reason ? ` — skipped: ${reason}` : ""}`, () => {
  const moto = useMotoServer();

  it("SIGKILL during uploads; feeds stay consistent, re-runs complete, gc aborts orphaned multipart uploads", async () => {
    // 10 MiB and a byte in 5 MiB parts: three parts (the last one short), as many as the 24 MiB in 8 MiB parts this once
    // used, at well under half the bytes.
    const { ws, store, bucket } = await s3Workspace(moto.server, "rkill", { partSizeMiB: 5 });
    await killAtRandom(ws, store, { label: "s3", runs: 4, dmgBytes: 10 * MiB + 1, seed: randomKillsSeed() });
    const gc = await runCli(["gc", "--config", ws.configFile, "--older-than", "0"]);
    expect(gc.code, gc.stderr).toBe(0);
    // Read strictly (a 2xx ListMultipartUploadsResult, not truncated): an error answer cannot pass as "none open".
    expect(await bucketReader(moto.server.endpoint, bucket).uploads()).toEqual([]);
  }, 900_000); // a hang guard, not a speed check: a loaded shared machine makes each S3 publish slow
});
