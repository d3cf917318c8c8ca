import { describe, expect, it } from "vitest";
import { killAndResume, WRITE_FAILPOINTS } from "../helpers/kill-points.js";
import { motoUnavailableReason } from "../helpers/moto-server.js";
import { s3Workspace, useMotoServer } from "../helpers/s3-workspace.js";

const reason = motoUnavailableReason();

/**
 * The S3 store at every boundary from the first write on. The boundaries
 * before `upload` leave the store untouched on any store (plan steps only
 * read); the folder store's file kills at each of them.
 */
describe.skipIf(Boolean(reason))(`SIGKILL at every step boundary, then the same command again (S3 store, moto)${reason ? ` — skipped: ${reason}` : ""}`, () => {
  const moto = useMotoServer();

  it("feeds never name a missing object and every re-run completes", async () => {
    const { ws, store } = await s3Workspace(moto.server, "kill");
    const result = await killAndResume(ws, store, "s3", WRITE_FAILPOINTS);
    expect(result.kills).toBe(WRITE_FAILPOINTS.length);
    console.log(`kill points (s3): ${result.kills} kills at ${WRITE_FAILPOINTS.join(", ")}, ${result.resumed} re-runs completed`);
  }, 900_000); // a hang guard, not a speed check
});
