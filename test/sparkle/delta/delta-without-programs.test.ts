import { execFileSync } from "node:child_process";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RelcastError } from "../../../src/core/errors.js";
import { applyDelta, readDeltaInfo } from "../../../src/sparkle/delta/delta-apply.js";
import { defaultCompression } from "../../../src/sparkle/delta/delta-codec.js";
import { createDelta } from "../../../src/sparkle/delta/delta-create.js";
import { describeTree, makeDeltaTrees } from "../../helpers/delta-trees.js";

/**
 * A Mac without Homebrew has no xz and no bzip2: deltas are then written with
 * zlib (Node's own raw DEFLATE, Sparkle's mode 5) and read, whatever their
 * compression, without an external program. `process.env.PATH` is pointed at
 * an empty folder around each call under test, so nothing can be spawned.
 */
let dir: string;
let oldRoot: string;
let newRoot: string;
let emptyBin: string;
const realPath = process.env.PATH;

async function withoutPrograms<T>(fn: () => Promise<T>): Promise<T> {
  process.env.PATH = emptyBin;
  try {
    return await fn();
  } finally {
    process.env.PATH = realPath;
  }
}

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "relcast-no-xz-"));
  ({ oldRoot, newRoot } = await makeDeltaTrees(dir));
  emptyBin = path.join(dir, "empty-bin");
  await mkdir(emptyBin);
});
afterAll(async () => {
  process.env.PATH = realPath;
  await rm(dir, { recursive: true, force: true });
});

describe("deltas with no xz or bzip2 on the PATH", () => {
  it("default to lzma where xz is on the PATH and to zlib where it is not", async () => {
    expect(defaultCompression()).toBe("lzma"); // the test machine has xz (.ci/run installs it)
    expect(await withoutPrograms(async () => defaultCompression())).toBe("zlib");
  });

  it("are written with zlib: raw DEFLATE that Python's zlib reads whole, applied back to the new tree", async () => {
    const delta = path.join(dir, "zlib.delta");
    const summary = await withoutPrograms(() => createDelta(oldRoot, newRoot, delta, { compression: defaultCompression() }));
    const bytes = await readFile(delta);
    expect([bytes.toString("latin1", 0, 4), bytes[4], bytes[5]]).toEqual(["spk!", 5, 9]);
    const parsed = JSON.parse(execFileSync("python3", [path.join(import.meta.dirname, "read-delta.py"), delta], { encoding: "utf8" })) as { compression: number; after: string };
    expect(parsed).toMatchObject({ compression: 5, after: summary.afterHash });
    const out = path.join(dir, "zlib-out", "Demo.bundle");
    await withoutPrograms(() => applyDelta(oldRoot, out, delta));
    expect(await describeTree(out)).toEqual(await describeTree(newRoot));
  });

  it("read an lzma delta (made where xz was) with the WebAssembly xz decoder, byte for byte", async () => {
    const delta = path.join(dir, "lzma.delta");
    const summary = await createDelta(oldRoot, newRoot, delta, { compression: "lzma" });
    execFileSync("xz", ["-t", "--single-stream"], { input: (await readFile(delta)).subarray(6) }); // Debian's xz agrees it is one sound stream
    const info = await withoutPrograms(() => readDeltaInfo(delta));
    expect(info.header).toMatchObject({ compression: "lzma", afterHash: summary.afterHash });
    const out = path.join(dir, "lzma-out", "Demo.bundle");
    await withoutPrograms(() => applyDelta(oldRoot, out, delta));
    expect(await describeTree(out)).toEqual(await describeTree(newRoot));
  });

  it("refuse a damaged lzma or zlib body as a damaged delta (E_VERIFY naming the file), not a crash", async () => {
    for (const compression of ["lzma", "zlib"] as const) {
      const delta = path.join(dir, `damaged-${compression}.delta`);
      await createDelta(oldRoot, newRoot, delta, { compression });
      const bytes = await readFile(delta);
      bytes[Math.floor(bytes.length / 2)]! ^= 0xff;
      await writeFile(delta, bytes);
      const out = path.join(dir, `damaged-${compression}-out`);
      const err = await withoutPrograms(() => applyDelta(oldRoot, out, delta)).catch((e: unknown) => e);
      expect(err, compression).toBeInstanceOf(RelcastError);
      expect((err as RelcastError).code).toMatch(/^E_(VERIFY|INPUT)$/);
      // Raw DEFLATE has no checksum: a flipped byte may still inflate, and the tree hash check then names the delta by its file name.
      expect((err as RelcastError).message).toContain(path.basename(delta));
      await expect(readFile(out)).rejects.toThrow(/ENOENT/);
    }
  });

  it("asked for lzma or bzip2 explicitly, refuse before writing, naming the program and zlib as the way out", async () => {
    for (const compression of ["lzma", "bzip2"] as const) {
      const delta = path.join(dir, `refused-${compression}.delta`);
      const err = await withoutPrograms(() => createDelta(oldRoot, newRoot, delta, { compression })).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(RelcastError);
      expect((err as RelcastError).code).toBe("E_INPUT");
      expect((err as RelcastError).message).toContain(compression === "lzma" ? "xz" : "bzip2");
      expect((err as RelcastError).hint).toMatch(/zlib/);
      await expect(readFile(delta)).rejects.toThrow(/ENOENT/);
    }
  });
});
