import { rm } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../helpers/run-cli.js";
import { pluginIn } from "../helpers/release-kit.js";
import { makeWorkspace, snapshotTree, type Workspace } from "../helpers/workspace.js";

/**
 * A store that holds no releases is named, resolved, on every publish into
 * it, so `file://./public-stroe` is seen at once; a store with releases is
 * not announced. An identical re-run says in one line that there was
 * nothing to do.
 */
// The --quiet check publishes into a store of its own and runs beside the first test; the re-run needs
// the first test's store, so it runs after it.
describe.concurrent("publishing into a store without releases", () => {
  let ws: Workspace;
  let typo: string;
  beforeAll(async () => {
    ws = await makeWorkspace();
    typo = path.join(ws.dir, "public-stroe");
  });
  afterAll(async () => {
    await rm(ws.dir, { recursive: true, force: true });
  });

  const announce = () => `warning: publishing the first release into the folder ${typo}: it holds no releases yet`;

  it("is announced with the store's absolute folder by the dry run and by the publish, and no longer once it holds a release", async () => {
    const p = await ws.plugin("1.0.0", 100);
    const args = [...ws.publishArgs(p, "1.0.0"), "--store", "file://./public-stroe"];
    const dry = await runCli([...args, "--dry-run"], { cwd: ws.dir });
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stderr).toContain(announce());
    const real = await runCli(args, { cwd: ws.dir });
    expect(real.code, real.stderr).toBe(0);
    expect(real.stderr).toContain(announce());
    const next = await ws.plugin("1.1.0", 110);
    const second = await runCli([...ws.publishArgs(next, "1.1.0"), "--store", "file://./public-stroe"], { cwd: ws.dir });
    expect(second.code, second.stderr).toBe(0);
    expect(second.stderr).not.toContain("first release");
  });

  it("--quiet still announces it (the one warning a typo needs)", async () => {
    const p = await pluginIn(ws, "quiet", "1.0.0", 100);
    const res = await runCli([...ws.publishArgs(p, "1.0.0"), "--store", `file://${ws.dir}/other-store`, "--dry-run", "--quiet"], { cwd: ws.dir });
    expect(res.code, res.stderr).toBe(0);
    expect(res.stderr).toContain(`publishing the first release into the folder ${ws.dir}/other-store`);
  });

  it.sequential("an identical re-run prints one line: nothing to do, and writes nothing", async () => {
    const p = await ws.plugin("1.1.0", 110);
    const before = await snapshotTree(typo);
    const again = await runCli([...ws.publishArgs(p, "1.1.0"), "--store", "file://./public-stroe"], { cwd: ws.dir });
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toBe("");
    expect(again.stderr).toBe("bridge-plugin 1.1.0 is already published in this store, byte for byte: nothing to do\n");
    expect(await snapshotTree(typo)).toEqual(before);
  });
});
