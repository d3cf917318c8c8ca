import { mkdir, mkdtemp, rm, symlink, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../../helpers/run-cli.js";
import { createDeltaFromTrees } from "../../../src/sparkle/delta/delta-create.js";
import { hashTree } from "../../../src/sparkle/delta/tree-hash.js";

/**
 * A link is checked in the result, resolved through every link on the way:
 * `esc -> up/..` is harmless as text, but beside `up -> ..` it leaves the
 * bundle (the class of GHSA-hg88-v3cw-3qrh, one step further than a
 * lexical check sees).
 */
describe("delta apply: links that leave the tree through other links", () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), "relcast-delta-links-"));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it("refuses a result whose link resolves outside the bundle, and writes no such link", async () => {
    const oldRoot = path.join(dir, "old", "B.bundle");
    const newRoot = path.join(dir, "new", "B.bundle");
    for (const root of [oldRoot, newRoot]) {
      await mkdir(path.join(root, "Contents"), { recursive: true });
      await writeFile(path.join(root, "Contents", "f"), "hi\n");
      await symlink("..", path.join(root, "Contents", "up"));
    }
    await symlink("up/..", path.join(newRoot, "Contents", "esc"));
    const delta = path.join(dir, "d.delta");
    // `delta create` refuses to make it (it checks the new tree as the applier checks the result)...
    const refused = await runCli(["delta", "create", oldRoot, newRoot, delta]);
    expect(refused.code, refused.stderr).toBe(4);
    expect(refused.stderr).toMatch(/link \/Contents\/esc climbs above the bundle/);
    // ...so the hostile delta is made from the trees directly (each link alone is inside as text), as an attacker would.
    await createDeltaFromTrees(await hashTree(oldRoot), await hashTree(newRoot), delta, { compression: "zlib" });
    const out = path.join(dir, "out", "B.bundle");
    const applied = await runCli(["delta", "apply", oldRoot, out, delta]);
    expect(applied.code, applied.stderr).not.toBe(0);
    expect(applied.code).not.toBe(70);
    expect(applied.stderr).toMatch(/link \/Contents\/esc in the result climbs above the bundle/);
  });
});
