import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { snapshotDiskImage } from "../../../src/steps/preflight/disk-image-snapshot.js";

describe("disk image snapshot (the bytes a publish hashes are the bytes it publishes)", () => {
  let dir: string;
  beforeAll(async () => { dir = await mkdtemp(path.join(os.tmpdir(), "relcast-snap-")); });
  afterAll(async () => { await rm(dir, { recursive: true, force: true }); });

  it("copies the image into the work folder and hashes the copy (sha256sum agrees); a later change to the build output does not reach it", async () => {
    const dmg = path.join(dir, "Plugin.dmg");
    const bytes = randomBytes(3 * 1024 * 1024 + 17);
    await writeFile(dmg, bytes);
    const work = await mkdtemp(path.join(dir, "work-"));
    const snap = await snapshotDiskImage(dmg, work);
    expect(path.dirname(snap.file)).toBe(work);
    expect(snap.sizeBytes).toBe(bytes.length);
    expect(snap.sha256).toBe(execFileSync("sha256sum", [dmg], { encoding: "utf8" }).split(" ")[0]);
    await writeFile(dmg, "rebuilt meanwhile");
    expect((await readFile(snap.file)).equals(bytes)).toBe(true);
  });

  it("says which file could not be copied where, and how to fix it", async () => {
    await expect(snapshotDiskImage(path.join(dir, "missing.dmg"), dir)).rejects.toMatchObject({
      code: "E_INPUT",
      message: expect.stringMatching(/could not copy the disk image .*missing\.dmg into the work folder/),
      hint: expect.stringMatching(/TMPDIR/),
    });
  });
});
