import { execFileSync, spawnSync } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createBsdiffPatch, writeOfft } from "../../../src/sparkle/delta/bsdiff-create.js";
import { applyBsdiffPatch } from "../../../src/sparkle/delta/bspatch.js";
import { binaryish } from "../../helpers/delta-trees.js";

/** Debian's bsdiff/bspatch (BSDIFF40: the same control/diff/extra blocks, each bzip2-compressed). */
function debianBsdiff(): boolean {
  const missing = ["bsdiff", "bspatch", "bzip2"].filter((tool) => spawnSync("sh", ["-c", `command -v ${tool}`]).status !== 0);
  if (missing.length === 0) return true;
  if (process.env.CI === "true") throw new Error(`CI=true and ${missing.join(", ")} not installed (apt-get install -y bsdiff bzip2)`);
  console.warn(`skipping the Debian bsdiff cross-checks: ${missing.join(", ")} not installed`);
  return false;
}
const haveTools = debianBsdiff();

function readOfft(buf: Buffer, at: number): number {
  const magnitude = Number(buf.readBigUInt64LE(at) & 0x7fffffffffffffffn);
  return buf[at + 7]! & 0x80 ? -magnitude : magnitude;
}

/** BSDIFN40 → BSDIFF40: the same three blocks, each bzip2-compressed, lengths rewritten. */
function toBsdiff40(patch: Buffer): Buffer {
  const ctrlLen = readOfft(patch, 8);
  const diffLen = readOfft(patch, 16);
  const bz = (b: Buffer): Buffer => execFileSync("bzip2", ["-9", "-c"], { input: b, maxBuffer: 1 << 30 });
  const ctrl = bz(patch.subarray(32, 32 + ctrlLen));
  const diff = bz(patch.subarray(32 + ctrlLen, 32 + ctrlLen + diffLen));
  const extra = bz(patch.subarray(32 + ctrlLen + diffLen));
  const header = Buffer.alloc(32);
  header.write("BSDIFF40", 0, "latin1");
  writeOfft(ctrl.length, header, 8);
  writeOfft(diff.length, header, 16);
  header.set(patch.subarray(24, 32), 24);
  return Buffer.concat([header, ctrl, diff, extra]);
}

function pairs(): Array<[string, Buffer, Buffer]> {
  const exe = binaryish(120_000, 11);
  const shifted = Buffer.concat([exe.subarray(0, 40_000), Buffer.from("inserted bytes that shift everything"), exe.subarray(40_000)]);
  const pointers = Buffer.from(exe);
  for (let i = 0; i < pointers.length; i += 997) pointers[i] = (pointers[i]! + 3) & 0xff;
  const text = Buffer.from("release notes line\n".repeat(3000));
  const text2 = Buffer.from(text.toString().replace(/line\n/g, (m, off: number) => (off % 7000 === 0 ? "LINE\n" : m)));
  return [
    ["insertion", exe, shifted],
    ["scattered byte changes", exe, pointers],
    ["text edits", text, text2],
    ["unrelated files", binaryish(20_000, 1), binaryish(25_000, 2)],
    ["old file empty", Buffer.alloc(0), binaryish(5000, 3)],
    ["new file truncated", exe, exe.subarray(0, 10_000)],
  ];
}

describe.skipIf(!haveTools)("per-file patches against Debian's bsdiff and bspatch", () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), "relcast-bsdiff-"));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it.each(pairs())("%s: our patch, recompressed as BSDIFF40, is applied by Debian's bspatch", async (name, old, neu) => {
    const patch = createBsdiffPatch(old, neu);
    expect(patch.toString("latin1", 0, 8)).toBe("BSDIFN40");
    expect(applyBsdiffPatch(old, patch).equals(neu)).toBe(true);
    const oldFile = path.join(dir, `${name}.old`);
    const outFile = path.join(dir, `${name}.out`);
    const patchFile = path.join(dir, `${name}.bsdiff40`);
    await writeFile(oldFile, old);
    await writeFile(patchFile, toBsdiff40(patch));
    execFileSync("bspatch", [oldFile, outFile, patchFile]);
    expect((await readFile(outFile)).equals(neu)).toBe(true);
  });

  // Debian's bsdiff cannot mmap an empty old file, so that pair is ours-only.
  it.each(pairs().filter(([, old]) => old.length > 0))("%s: Debian's bsdiff patch is applied by relcast's bspatch", async (name, old, neu) => {
    const oldFile = path.join(dir, `${name}.o`);
    const newFile = path.join(dir, `${name}.n`);
    const patchFile = path.join(dir, `${name}.deb`);
    await writeFile(oldFile, old);
    await writeFile(newFile, neu);
    execFileSync("bsdiff", [oldFile, newFile, patchFile]);
    const patch = await readFile(patchFile);
    expect(patch.toString("latin1", 0, 8)).toBe("BSDIFF40");
    expect(applyBsdiffPatch(old, patch).equals(neu)).toBe(true);
  });

  it("makes patches about as small as Debian's bsdiff does (both bzip2-compressed)", async () => {
    for (const [name, old, neu] of pairs().slice(0, 3)) {
      const ours = toBsdiff40(createBsdiffPatch(old, neu)).length;
      const oldFile = path.join(dir, `${name}.so`);
      const newFile = path.join(dir, `${name}.sn`);
      const patchFile = path.join(dir, `${name}.sp`);
      await writeFile(oldFile, old);
      await writeFile(newFile, neu);
      execFileSync("bsdiff", [oldFile, newFile, patchFile]);
      const theirs = (await readFile(patchFile)).length;
      expect(ours, name).toBeLessThanOrEqual(Math.ceil(theirs * 1.1) + 64);
    }
  });

  it("rejects truncated and inconsistent patches instead of reading past them", () => {
    const [, old, neu] = pairs()[0]!;
    const patch = createBsdiffPatch(old, neu);
    expect(() => applyBsdiffPatch(old, patch.subarray(0, 20))).toThrow(/header/);
    expect(() => applyBsdiffPatch(old, patch.subarray(0, patch.length - 100))).toThrow(/Corrupt/);
    const lying = Buffer.from(patch);
    writeOfft(neu.length * 2, lying, 24);
    // A header claiming more than its blocks carry is refused before any block is read (bspatch.ts, issue 33 item 3).
    expect(() => applyBsdiffPatch(old, lying)).toThrow(/header claims a new file of \d+ bytes, but its blocks carry only \d+/);
  });
});
