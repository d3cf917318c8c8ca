import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openStore } from "../../src/store/open-store.js";
import { killAndResume, WRITE_FAILPOINTS } from "../helpers/kill-points.js";
import { motoUnavailableReason, startMotoServer, type MotoServer } from "../helpers/moto-server.js";
import { makeWorkspace } from "../helpers/workspace.js";

const reason = motoUnavailableReason();

/**
 * The S3 store at every boundary from the first write on. The boundaries
 * before `upload` leave the store untouched on any store (plan steps only
 * read); the folder store's file kills at each of them.
 */
describe.skipIf(Boolean(reason))(`SIGKILL at every step boundary, then the same command again (S3 store, moto)${reason ? ` — skipped: ${reason}` : ""}`, () => {
  let moto: MotoServer | undefined;
  beforeAll(async () => {
    moto = await startMotoServer();
  });
  afterAll(async () => {
    await moto?.stop();
  });

  it("feeds never name a missing object and every re-run completes", async () => {
    const bucket = `kill-${randomBytes(3).toString("hex")}`;
    const s3 = { endpoint: moto!.endpoint, forcePathStyle: true, region: "us-east-1" };
    const ws = await makeWorkspace({ store: `s3://${bucket}/site`, s3 });
    const store = await openStore(`s3://${bucket}/site`, ws.dir, { s3 });
    await fetch(`${moto!.endpoint}/${bucket}`, { method: "PUT" });
    const result = await killAndResume(ws, store, "s3", WRITE_FAILPOINTS);
    expect(result.kills).toBe(WRITE_FAILPOINTS.length);
    console.log(`kill points (s3): ${result.kills} kills at ${WRITE_FAILPOINTS.join(", ")}, ${result.resumed} re-runs completed`);
  }, 900_000); // a hang guard, not a speed check
});
