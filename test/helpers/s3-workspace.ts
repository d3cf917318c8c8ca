import { randomBytes } from "node:crypto";
import { afterAll, beforeAll } from "vitest";
import { openStore } from "../../src/store/open-store.js";
import type { ObjectStore } from "../../src/store/object-store.js";
import { startMotoServer, type MotoServer } from "./moto-server.js";
import { makeWorkspace, type Workspace } from "./workspace.js";

/** moto for the test file: started in beforeAll, stopped in afterAll; read `.server` inside the tests. */
export function useMotoServer(): { server: MotoServer } {
  const ctx = {} as { server: MotoServer };
  beforeAll(async () => {
    ctx.server = await startMotoServer();
  });
  afterAll(async () => {
    await ctx.server?.stop();
  });
  return ctx;
}

/**
 * A new bucket on moto (named `<label>-<random>`), a workspace whose store is
 * `s3://<bucket>/site` there (`workspaceS3` adds S3 options to the
 * workspace's config only, e.g. a part size), and that store opened here.
 */
export async function s3Workspace(moto: MotoServer, label: string, workspaceS3: Record<string, unknown> = {}): Promise<{ ws: Workspace; store: ObjectStore; bucket: string }> {
  const bucket = `${label}-${randomBytes(3).toString("hex")}`;
  const s3 = { endpoint: moto.endpoint, forcePathStyle: true, region: "us-east-1" };
  const ws = await makeWorkspace({ store: `s3://${bucket}/site`, s3: { ...s3, ...workspaceS3 } });
  await fetch(`${moto.endpoint}/${bucket}`, { method: "PUT" });
  const store = await openStore(`s3://${bucket}/site`, ws.dir, { s3 });
  return { ws, store, bucket };
}
