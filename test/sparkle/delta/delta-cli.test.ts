import { execFileSync } from "node:child_process";
import { mkdtemp, readFile, rm, stat } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { zipBundle } from "../../../src/steps/zip/reproducible-zip.js";
import { describeTree, makeDeltaTrees } from "../../helpers/delta-trees.js";
import { runCli } from "../../helpers/run-cli.js";

let dir: string;
let oldRoot: string;
let newRoot: string;
let oldZip: string;
let newZip: string;

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "relcast-delta-cli-"));
  ({ oldRoot, newRoot } = await makeDeltaTrees(dir));
  oldZip = path.join(dir, "old.zip");
  newZip = path.join(dir, "new.zip");
  await zipBundle(oldRoot, oldZip);
  await zipBundle(newRoot, newZip);
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("relcast delta", () => {
  it("creates from zips, applies to the old zip, and the result unzips-equal to the new zip", async () => {
    const delta = path.join(dir, "zips.delta");
    const created = await runCli(["delta", "create", oldZip, newZip, delta]);
    expect(created.stderr).toBe("");
    expect(created.code).toBe(0);
    expect(created.stdout).toMatch(/wrote .*zips\.delta \(\d+ bytes, lzma\)/);
    expect(created.stdout).toMatch(/\d+ diffed, \d+ extracted, \d+ cloned, \d+ deleted, \d+ permission changes/);

    const out = path.join(dir, "applied", "Demo.bundle");
    const applied = await runCli(["delta", "apply", oldZip, out, delta]);
    expect(applied.code, applied.stderr).toBe(0);
    expect(applied.stdout).toMatch(/as the delta promises/);
    // Independent unpacking of the new zip by Info-ZIP's unzip.
    const unpacked = path.join(dir, "unzipped");
    execFileSync("unzip", ["-q", newZip, "-d", unpacked]);
    expect(await describeTree(out)).toEqual(await describeTree(path.join(unpacked, "Demo.bundle")));
  });

  it("info lists the header and items, also as JSON", async () => {
    const delta = path.join(dir, "folders.delta");
    expect((await runCli(["delta", "create", oldRoot, newRoot, delta, "--compression", "bzip2"])).code).toBe(0);
    const info = await runCli(["delta", "info", delta]);
    expect(info.code).toBe(0);
    expect(info.stdout).toMatch(/Sparkle delta version 3\.1, bzip2 compression \(level 9\)/);
    expect(info.stdout).toMatch(/binaryDiff\+clone\s+\/Contents\/Resources\/b\/assets\.dat\s+\(from \/Contents\/Resources\/a\/assets\.dat/);
    const json = JSON.parse((await runCli(["delta", "info", delta, "--json"])).stdout) as { header: { compression: string }; items: unknown[] };
    expect(json.header.compression).toBe("bzip2");
    expect(json.items.length).toBeGreaterThan(10);
  });

  it("explains bad input and writes nothing", async () => {
    const missing = await runCli(["delta", "create", path.join(dir, "nope"), newRoot, path.join(dir, "x.delta")]);
    expect(missing.code).toBe(4);
    expect(missing.stderr).toMatch(/does not exist/);
    await expect(stat(path.join(dir, "x.delta"))).rejects.toThrow(/ENOENT/);
    const badMode = await runCli(["delta", "create", oldRoot, newRoot, path.join(dir, "x.delta"), "--compression", "zstd"]);
    expect(badMode.code).toBe(2);
    expect(badMode.stderr).toMatch(/--compression must be one of lzma, zlib, bzip2, none/);
    const notDelta = await runCli(["delta", "info", oldZip]);
    expect(notDelta.code).toBe(11);
    expect(notDelta.stderr).toMatch(/does not start with "spk!"/);
    const delta = path.join(dir, "wrong.delta");
    await runCli(["delta", "create", oldRoot, newRoot, delta, "--compression", "none"]);
    const wrongOld = await runCli(["delta", "apply", newZip, path.join(dir, "wrong-out"), delta]);
    expect(wrongOld.code).toBe(11);
    expect(wrongOld.stderr).toMatch(/not the bundle this delta was made from/);
    await expect(readFile(path.join(dir, "wrong-out"))).rejects.toThrow(/ENOENT/);
  });
});
