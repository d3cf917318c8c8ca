/**
 * Issue 33 item 3: hostile deltas are bounded. A few kilobytes that claim (and
 * inflate to) 5 GiB, a bsdiff header claiming an absurd new size, links that
 * leave the bundle and writes through links: each refused with a clear
 * message and its exit code, and the temp folder's growth measured while the
 * command runs. Every CLI here runs with `ulimit -f` (64 MiB per file), so the
 * old code, which inflated the whole body into the temp folder, fails fast
 * instead of filling the disk.
 */
import { spawn } from "node:child_process";
import { symlinkSync } from "node:fs";
import { createHash, createPrivateKey } from "node:crypto";
import { sign } from "node:crypto";
import { lstat, mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { applyDeltaToTree } from "../../../src/sparkle/delta/delta-apply-tree.js";
import { hashTree } from "../../../src/sparkle/delta/tree-hash.js";
import { bsdiffn, CMD, rawBody, S_IFLNK, S_IFREG, writeRawDelta, zeroStreams } from "../../helpers/hostile-delta.js";
import { CLI, runCli } from "../../helpers/run-cli.js";
import { makeWorkspace, type Workspace } from "../../helpers/workspace.js";

const FIVE_GIB = 5 * 1024 ** 3;
/** Past what `delta info` and `delta apply` accept for one file (64 GiB: they do not know the new tree, and whole files of several GiB are real). */
const HUNDRED_GIB = 100 * 1024 ** 3;
const ZEROS = "00".repeat(20);
let dir: string;

/**
 * `copies` bzip2 streams of 64 MiB of zeros, as zeroStreams gives them: the one stream is compressed once for the
 * file (bzip2 -9 over 64 MiB each time otherwise) and repeated; the bombs below are the same bytes as before.
 */
let zeroStream: Buffer | undefined;
function bombTail(copies: number): Buffer {
  zeroStream ??= zeroStreams(1);
  return Buffer.concat(Array.from({ length: copies }, () => zeroStream!));
}

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "relcast-hostile-delta-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function folderBytes(root: string): Promise<number> {
  let total = 0;
  let names: string[];
  try {
    names = await readdir(root);
  } catch {
    return 0;
  }
  for (const name of names) {
    const abs = path.join(root, name);
    const st = await lstat(abs).catch(() => undefined);
    if (!st) continue;
    total += st.isDirectory() ? await folderBytes(abs) : st.size;
  }
  return total;
}

/** Runs the CLI with its own TMPDIR and a 64 MiB file-size limit; samples the TMPDIR's size until the CLI exits. */
async function runMeasured(args: string[]): Promise<{ code: number | null; signal: string | null; out: string; peakTempBytes: number }> {
  const tmp = await mkdtemp(path.join(dir, "tmp-"));
  const child = spawn("bash", ["-c", 'ulimit -f 65536; exec "$0" "$@"', process.execPath, CLI, ...args], { env: { ...process.env, TMPDIR: tmp, GITHUB_ACTIONS: "" } });
  let out = "";
  child.stdout.on("data", (d: Buffer) => (out += d.toString()));
  child.stderr.on("data", (d: Buffer) => (out += d.toString()));
  let done = false;
  const exited = new Promise<[number | null, string | null]>((resolve) => child.on("close", (code, signal) => ((done = true), resolve([code, signal]))));
  let peak = 0;
  while (!done) {
    peak = Math.max(peak, await folderBytes(tmp));
    await new Promise((r) => setTimeout(r, 5));
  }
  const [code, signal] = await exited;
  peak = Math.max(peak, await folderBytes(tmp));
  await rm(tmp, { recursive: true, force: true });
  return { code, signal, out, peakTempBytes: peak };
}

/** A small bundle folder to apply deltas to. */
async function oldBundle(name: string): Promise<string> {
  const root = path.join(dir, name, "Demo.bundle");
  await mkdir(path.join(root, "Contents", "Resources"), { recursive: true });
  await writeFile(path.join(root, "Contents", "Info.plist"), "<plist/>");
  await writeFile(path.join(root, "Contents", "Resources", "data.bin"), Buffer.alloc(4096, 7));
  return root;
}

/** The tree hash of `root` after `change` is made to a copy of it (the honest after-hash of a hostile delta). */
async function hashAfter(root: string, change: (copy: string) => Promise<void>): Promise<string> {
  const copy = path.join(dir, `after-${Math.random().toString(36).slice(2)}`, "Demo.bundle");
  await mkdir(path.dirname(copy), { recursive: true });
  const { cp } = await import("node:fs/promises");
  await cp(root, copy, { recursive: true, verbatimSymlinks: true });
  await change(copy);
  const hash = (await hashTree(copy)).hash.toString("hex");
  await rm(path.dirname(copy), { recursive: true, force: true });
  return hash;
}

describe("a delta bomb (5 GiB of zeros in a few kilobytes, claiming a 100 GiB file)", () => {
  let bomb: string;
  beforeAll(async () => {
    bomb = path.join(dir, "bomb.delta");
    const body = rawBody(ZEROS, ZEROS, [{ rel: "/Contents/Resources/bomb.bin", commands: CMD.extract, mode: S_IFREG | 0o644, dataLength: HUNDRED_GIB }]);
    await writeRawDelta(bomb, body, "bzip2", bombTail(80));
  });

  it("is small on disk", async () => {
    expect((await readFile(bomb)).length).toBeLessThan(64 * 1024);
  });

  it("delta info refuses it (exit 4) and the temp folder does not grow", async () => {
    const r = await runMeasured(["delta", "info", bomb]);
    expect(r.signal).toBeNull();
    expect(r.code, r.out).toBe(4);
    expect(r.out).toContain(`the file /Contents/Resources/bomb.bin claims ${HUNDRED_GIB} bytes, more than the ${64 * 1024 ** 3}`);
    expect(r.peakTempBytes).toBeLessThan(4 * 1024 * 1024);
  });

  it("delta apply refuses it (exit 4), writes no output folder and the temp folder does not grow", async () => {
    const old = await oldBundle("bomb-old");
    const out = path.join(dir, "bomb-out", "Demo.bundle");
    const r = await runMeasured(["delta", "apply", old, out, bomb]);
    expect(r.signal).toBeNull();
    expect(r.code, r.out).toBe(4);
    expect(r.out).toContain(`claims ${HUNDRED_GIB} bytes`);
    expect(r.peakTempBytes).toBeLessThan(4 * 1024 * 1024);
    await expect(lstat(out)).rejects.toThrow();
  });

  it("a body that inflates past what its items claim is refused (exit 4), reading no more than a buffer past the claim", async () => {
    const liar = path.join(dir, "liar.delta");
    const old = await oldBundle("liar-old");
    const before = await hashTree(old);
    const honest = rawBody(before.hash.toString("hex"), ZEROS, [{ rel: "/Contents/Resources/small.bin", commands: CMD.extract, mode: S_IFREG | 0o644, dataLength: 10 }]);
    await writeRawDelta(liar, honest, "bzip2", bombTail(80));
    const r = await runMeasured(["delta", "apply", old, path.join(dir, "liar-out", "Demo.bundle"), liar]);
    expect(r.code, r.out).toBe(4);
    expect(r.out).toMatch(/decompresses to more than the \d+ bytes its header and items claim|holds more data than its items claim/);
    expect(r.peakTempBytes).toBeLessThan(4 * 1024 * 1024);
  });
});

describe("a bsdiff header claiming an absurd new size", () => {
  it("delta apply refuses it as input (exit 4), not as an internal error (70)", async () => {
    const old = await oldBundle("bsdiff-old");
    const before = (await hashTree(old)).hash.toString("hex");
    const patch = bsdiffn(2 ** 50, Buffer.alloc(24), Buffer.alloc(0), Buffer.alloc(0));
    const file = path.join(dir, "absurd-bsdiff.delta");
    await writeRawDelta(file, rawBody(before, ZEROS, [{ rel: "/Contents/Resources/data.bin", commands: CMD.binaryDiff, data: patch }]), "none");
    const r = await runMeasured(["delta", "apply", old, path.join(dir, "bsdiff-out", "Demo.bundle"), file]);
    expect(r.code, r.out).toBe(4);
    expect(r.out).toContain(`claims a new file of ${2 ** 50} bytes`);
  });

  it("a new size larger than the patch's blocks carry is refused too", async () => {
    const old = await oldBundle("bsdiff-old-2");
    const before = (await hashTree(old)).hash.toString("hex");
    const patch = bsdiffn(100_000_000, Buffer.alloc(24), Buffer.alloc(16), Buffer.alloc(0));
    const file = path.join(dir, "short-bsdiff.delta");
    await writeRawDelta(file, rawBody(before, ZEROS, [{ rel: "/Contents/Resources/data.bin", commands: CMD.binaryDiff, data: patch }]), "none");
    const r = await runMeasured(["delta", "apply", old, path.join(dir, "bsdiff-out-2", "Demo.bundle"), file]);
    expect(r.code, r.out).toBe(4);
    expect(r.out).toContain("but its blocks carry only 16");
  });
});

describe("links in a delta", () => {
  async function linkDelta(name: string, target: string): Promise<{ old: string; file: string; out: string }> {
    const old = await oldBundle(`${name}-old`);
    const before = (await hashTree(old)).hash.toString("hex");
    // The after-hash is the honest one: the old code applied such a delta and exited 0.
    const after = await hashAfter(old, (copy) => symlink(target, path.join(copy, "Contents", "Resources", "evil")));
    const file = path.join(dir, `${name}.delta`);
    const data = Buffer.from(target, "utf8");
    await writeRawDelta(file, rawBody(before, after, [{ rel: "/Contents/Resources/evil", commands: CMD.extract, mode: S_IFLNK | 0o755, data }]), "none");
    return { old, file, out: path.join(dir, `${name}-out`, "Demo.bundle") };
  }

  it.each([
    ["escape-up", "../../../../etc"],
    ["escape-absolute", "/etc/passwd"],
    ["escape-deep", "a/../../../../../x"],
  ])("a link whose target leaves the tree (%s) is refused and nothing is left", async (name, target) => {
    const { old, file, out } = await linkDelta(name, target);
    const r = await runCli(["delta", "apply", old, out, file]);
    expect(r.code, r.stderr).toBe(11);
    expect(r.stderr).toContain("outside the bundle");
    await expect(lstat(out)).rejects.toThrow();
  });

  it("a link whose target is not UTF-8 is refused by both appliers (never made with U+FFFD in its place), and nothing is left", async () => {
    const old = await oldBundle("latin1-old");
    const tree = await hashTree(old);
    const target = Buffer.from([0x61, 0xff]);
    const after = await hashAfter(old, async (copy) => symlinkSync(target, Buffer.from(path.join(copy, "Contents", "Resources", "evil"))));
    const file = path.join(dir, "latin1.delta");
    await writeRawDelta(file, rawBody(tree.hash.toString("hex"), after, [{ rel: "/Contents/Resources/evil", commands: CMD.extract, mode: S_IFLNK | 0o755, data: target }]), "none");
    const out = path.join(dir, "latin1-out", "Demo.bundle");
    const r = await runCli(["delta", "apply", old, out, file]);
    expect(r.code, r.stderr).toBe(11);
    expect(r.stderr).toContain("link /Contents/Resources/evil has a target that is not valid UTF-8 (a\\xff)");
    await expect(lstat(out)).rejects.toThrow();
    // The in-memory applier (publish's check of a delta before upload) keeps the same rule.
    await expect(applyDeltaToTree(tree, file)).rejects.toThrow(/link \/Contents\/Resources\/evil has a target that is not valid UTF-8/);
  });

  it("a link target over 1023 bytes (macOS's PATH_MAX with its NUL) is refused by delta info and both appliers (exit 4, was exit 70 ENAMETOOLONG at 4096), and nothing is left", async () => {
    const old = await oldBundle("long-old");
    const tree = await hashTree(old);
    for (const length of [1024, 4096]) {
      const target = Buffer.from(`${"./".repeat((length - 10) / 2)}Info.plist`);
      expect(target.length).toBe(length);
      const file = path.join(dir, `long-${length}.delta`);
      await writeRawDelta(file, rawBody(tree.hash.toString("hex"), ZEROS, [{ rel: "/Contents/l", commands: CMD.extract, mode: S_IFLNK | 0o755, data: target }]), "none");
      const out = path.join(dir, `long-${length}-out`, "Demo.bundle");
      for (const args of [["delta", "apply", old, out, file], ["delta", "info", file]]) {
        const r = await runCli(args);
        expect(r.code, r.stderr).toBe(4);
        expect(r.stderr).toContain(`the link /Contents/l claims ${length} bytes, more than the 1023 bytes a link target may have`);
        expect(r.stderr.length).toBeLessThan(1000);
      }
      await expect(lstat(out)).rejects.toThrow();
      await expect(applyDeltaToTree(tree, file)).rejects.toThrow(/the link \/Contents\/l claims \d+ bytes, more than the 1023 bytes/);
    }
  });

  it("a link that stays inside the tree is applied", async () => {
    const { old, file, out } = await linkDelta("inside", "../Info.plist");
    const r = await runCli(["delta", "apply", old, out, file]);
    expect(r.code, r.stderr).toBe(0);
  });

  it("a write through a link in the parent chain is refused, whether the delta made the link or the old tree had it", async () => {
    const old = await oldBundle("parent-link-old");
    await symlink("Resources", path.join(old, "Contents", "Current"));
    const before = (await hashTree(old)).hash.toString("hex");
    const file = path.join(dir, "parent-link.delta");
    await writeRawDelta(file, rawBody(before, ZEROS, [{ rel: "/Contents/Current/x", commands: CMD.extract, mode: S_IFREG | 0o644, data: Buffer.from("x") }]), "none");
    const r = await runCli(["delta", "apply", old, path.join(dir, "parent-link-out", "Demo.bundle"), file]);
    expect(r.code, r.stderr).toBe(11);
    expect(r.stderr).toContain("would be written through the symlink Contents/Current");

    const made = path.join(dir, "made-link.delta");
    const old2 = await oldBundle("made-link-old");
    const before2 = (await hashTree(old2)).hash.toString("hex");
    await writeRawDelta(made, rawBody(before2, ZEROS, [
      { rel: "/Contents/l", commands: CMD.extract, mode: S_IFLNK | 0o755, data: Buffer.from("Resources") },
      { rel: "/Contents/l/y", commands: CMD.extract, mode: S_IFREG | 0o644, data: Buffer.from("y") },
    ]), "none");
    const r2 = await runCli(["delta", "apply", old2, path.join(dir, "made-link-out", "Demo.bundle"), made]);
    expect(r2.code, r2.stderr).toBe(11);
    expect(r2.stderr).toContain("would be written through the symlink Contents/l");
  });
});

describe("verify and a hostile delta in the store", () => {
  let ws: Workspace;
  beforeAll(async () => {
    ws = await makeWorkspace({ deltas: { maximum: 1, compression: "bzip2" } });
    for (const [v, b] of [["1.0.0", 100], ["1.1.0", 110]] as const) {
      const p = await ws.plugin(v, b);
      const res = await runCli(ws.publishArgs(p, v));
      expect(res.code, res.stderr).toBe(0);
    }
  });
  afterAll(async () => {
    await rm(ws.dir, { recursive: true, force: true });
  });

  /** Replaces the published delta's bytes everywhere in the store; `resign` updates the records as a hostile signer would. */
  async function plant(bytes: Buffer, resign: boolean): Promise<void> {
    const name = "bridge-plugin-1.1.0-from-1.0.0.delta";
    const { walkFiles } = await import("../../helpers/walk-files.js");
    for await (const p of walkFiles(ws.storeDir)) if (path.basename(p) === name) await writeFile(p, bytes);
    if (!resign) return;
    const seed = ws.key.seed;
    const key = createPrivateKey({ key: Buffer.concat([Buffer.from("302e020100300506032b657004220420", "hex"), seed]), format: "der", type: "pkcs8" });
    const patch = (d: Record<string, unknown>) => Object.assign(d, { sizeBytes: bytes.length, sha256: createHash("sha256").update(bytes).digest("hex"), edSignature: sign(null, bytes, key).toString("base64") });
    for (const file of [path.join(ws.storeDir, "releases", "1.1.0", "release.json"), path.join(ws.storeDir, "releases", "catalog.json")]) {
      const json = JSON.parse(await readFile(file, "utf8"));
      for (const r of json.versions ?? [json]) if (r.version === "1.1.0") for (const d of r.autoupdate.deltas) patch(d);
      await writeFile(file, JSON.stringify(json, null, 2));
    }
  }

  it("a signed bomb is a problem (exit 11), the temp folder does not grow", async () => {
    const body = rawBody(ZEROS, ZEROS, [{ rel: "/Contents/Resources/bomb.bin", commands: CMD.extract, mode: S_IFREG | 0o644, dataLength: FIVE_GIB }]);
    const file = path.join(dir, "verify-bomb.delta");
    await writeRawDelta(file, body, "bzip2", bombTail(80));
    await plant(await readFile(file), true);
    const r = await runMeasured(["verify", "--config", ws.configFile]);
    expect(r.signal).toBeNull();
    expect(r.code, r.out).toBe(11);
    expect(r.out).toContain(`claims ${FIVE_GIB} bytes, more than the`);
    expect(r.out).toContain("the new release's zip allows");
    expect(r.peakTempBytes).toBeLessThan(4 * 1024 * 1024);
  });

  it("an unsigned bomb (bytes the record does not pin) is never opened", async () => {
    const body = rawBody(ZEROS, ZEROS, [{ rel: "/Contents/Resources/bomb.bin", commands: CMD.extract, mode: S_IFREG | 0o644, dataLength: 3 * 1024 ** 3 }]);
    const file = path.join(dir, "verify-bomb-2.delta");
    await writeRawDelta(file, body, "bzip2", bombTail(48));
    await plant(await readFile(file), false);
    const r = await runMeasured(["verify", "--config", ws.configFile]);
    expect(r.code, r.out).toBe(11);
    expect(r.out).toMatch(/delta releases\/1\.1\.0\/bridge-plugin-1\.1\.0-from-1\.0\.0\.delta is \d+ bytes; the record says/);
    expect(r.out).not.toContain("claims");
    expect(r.peakTempBytes).toBeLessThan(4 * 1024 * 1024);
  });
});
