import { execFileSync } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { chmod, mkdir, mkdtemp, readFile, rm, stat, symlink, utimes, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as fs from "node:fs";
import * as zlib from "node:zlib";
import * as crypto from "node:crypto";
import { newChunkFrame, runChunkJob } from "../../../src/steps/zip/chunk-job.js";
import { ChunkPool } from "../../../src/steps/zip/chunk-pool.js";
import { zipBundle, type ZipResult } from "../../../src/steps/zip/reproducible-zip.js";

/**
 * The zip writer checked by independent readers: Info-ZIP's unzip/zipinfo
 * and Python's zipfile read back what relcast wrote, byte for byte.
 */
const PY_READ = `
import json, sys, zipfile, hashlib, stat
out = []
with zipfile.ZipFile(sys.argv[1]) as z:
    for i in z.infolist():
        mode = i.external_attr >> 16
        data = z.read(i)
        out.append({"name": i.filename, "mode": mode, "method": i.compress_type, "date": list(i.date_time),
                     "utf8": bool(i.flag_bits & 0x800), "size": i.file_size,
                     "sha": hashlib.sha256(data).hexdigest(), "text": data.decode("utf-8", "replace") if stat.S_ISLNK(mode) else None})
print(json.dumps(out))
`;

interface PyEntry { name: string; mode: number; method: number; date: number[]; utf8: boolean; size: number; sha: string; text: string | null }

const sha = (b: Buffer) => createHash("sha256").update(b).digest("hex");

describe("reproducible zip writer (read back by unzip, zipinfo and Python zipfile)", () => {
  let dir: string;
  let bundle: string;
  /**
   * The bundle zipped once on worker threads (what the default picks for a bundle this size), with an observer,
   * and once on the main thread: the checks of what a zip holds read these two instead of zipping the same
   * bundle again for each (each zip deflates and hashes some 25 MB).
   */
  let threads: ZipResult;
  let inline: ZipResult;
  const observed = { hash: createHash("sha512"), bytes: 0 };
  const contents = new Map<string, Buffer>();
  // Compressible across several 1 MiB chunks, with repeats that reach back over chunk edges.
  const line = (i: number) => `line ${i % 977} of a compressible resource, repeated with small changes ${i % 13}\n`;
  const multiChunk = Buffer.from(Array.from({ length: 60_000 }, (_, i) => line(i)).join(""));
  const random = randomBytes(3 * (1 << 20) + 12345);
  const smallRandom = randomBytes(4000);
  // Larger than the writer's 4 MiB buffer, so their entries are written before their headers are patched.
  const largeRandom = randomBytes(5 * (1 << 20) + 999);
  const hexText = Buffer.from(randomBytes(5 * (1 << 20)).toString("hex"));
  // Random but for 400 zero bytes in the last 16 KiB: the probes say deflate, the whole file does not shrink.
  const mostlyRandom = randomBytes(5 * (1 << 20) + 777);
  mostlyRandom.fill(0, mostlyRandom.length - 8000, mostlyRandom.length - 7600);
  // Text but for random bytes where the probes look (start, middle, end): the whole file is stored, every chunk
  // of it (an earlier writer probed each chunk again and wrote deflated chunks into this stored entry).
  const probedNoise = Buffer.from(multiChunk.subarray(0, 3 * (1 << 20)));
  for (const at of [0, probedNoise.length / 2 - 8192, probedNoise.length - 16384]) randomBytes(16384).copy(probedNoise, at);

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), "relcast-zipw-"));
    bundle = path.join(dir, "Demo.bundle");
    const files: Record<string, Buffer> = {
      "Contents/Info.plist": Buffer.from("<plist><dict/></plist>\n"),
      "Contents/MacOS/Demo": Buffer.from("#!/bin/sh\necho demo\n"),
      "Contents/Resources/big.txt": multiChunk,
      "Contents/Resources/noise.bin": random,
      "Contents/Resources/small-noise.bin": smallRandom,
      "Contents/Resources/empty": Buffer.alloc(0),
      "Contents/Resources/large-noise.bin": largeRandom,
      "Contents/Resources/hex.txt": hexText,
      "Contents/Resources/mostly-noise.bin": mostlyRandom,
      "Contents/Resources/probed-noise.bin": probedNoise,
      "Contents/Resources/Überblick – café.txt": Buffer.from("non-ASCII name\n"),
      "Contents/Frameworks/B.framework/Versions/A/B": Buffer.from("binary"),
    };
    for (const [rel, data] of Object.entries(files)) {
      await mkdir(path.dirname(path.join(bundle, rel)), { recursive: true });
      await writeFile(path.join(bundle, rel), data);
      contents.set(`Demo.bundle/${rel}`, data);
    }
    await chmod(path.join(bundle, "Contents/MacOS/Demo"), 0o700);
    await chmod(path.join(bundle, "Contents/Info.plist"), 0o600);
    await symlink("A", path.join(bundle, "Contents/Frameworks/B.framework/Versions/Current"));
    await symlink("Versions/Current/B", path.join(bundle, "Contents/Frameworks/B.framework/B"));
    await writeFile(path.join(bundle, "Contents/.DS_Store"), "junk");
    await writeFile(path.join(bundle, "Contents/._Info.plist"), "junk");
    const observer = { update: (b: Uint8Array) => { observed.hash.update(b); observed.bytes += b.length; } };
    threads = await zipBundle(bundle, path.join(dir, "threads.zip"), { workers: true, observers: [observer] });
    inline = await zipBundle(bundle, path.join(dir, "inline.zip"), { workers: false });
  });
  afterAll(async () => { await rm(dir, { recursive: true, force: true }); });

  it("writes the same bytes twice, whatever the file times, and unzip -t finds no errors", async () => {
    const a = threads;
    await utimes(path.join(bundle, "Contents/Resources/big.txt"), new Date(2001, 1, 1), new Date(2001, 1, 1));
    const b = await zipBundle(bundle, path.join(dir, "b.zip"));
    const [ba, bb] = [await readFile(a.file), await readFile(b.file)];
    expect(ba.equals(bb)).toBe(true);
    expect(a.sha256).toBe(sha(ba));
    expect(a.sizeBytes).toBe((await stat(a.file)).size);
    expect(a.skipped.sort()).toEqual(["Demo.bundle/Contents/._Info.plist", "Demo.bundle/Contents/.DS_Store"].sort());
    const test = execFileSync("unzip", ["-t", a.file], { encoding: "utf8" });
    expect(test).toMatch(/No errors detected/);
  });

  it("stores every file's bytes, fixed dates, normalised modes and symlinks as links", async () => {
    const z = threads;
    const entries = JSON.parse(execFileSync("python3", ["-c", PY_READ, z.file], { encoding: "utf8" })) as PyEntry[];
    const byName = new Map(entries.map((e) => [e.name, e]));
    expect(entries.map((e) => e.name)).toEqual([...entries.map((e) => e.name)].sort());
    expect(z.entryCount).toBe(entries.length);
    for (const [name, data] of contents) {
      const e = byName.get(name);
      expect(e, name).toBeDefined();
      expect(e!.sha, name).toBe(sha(data));
      expect(e!.size, name).toBe(data.length);
    }
    for (const e of entries) expect(e.date, e.name).toEqual([1980, 1, 1, 0, 0, 0]);
    const mode = (n: string) => byName.get(`Demo.bundle/${n}`)!.mode;
    expect(mode("Contents/MacOS/Demo")).toBe(0o100755);
    expect(mode("Contents/Info.plist")).toBe(0o100644);
    expect(mode("Contents/")).toBe(0o40755);
    expect(mode("Contents/Frameworks/B.framework/Versions/Current")).toBe(0o120755);
    expect(byName.get("Demo.bundle/Contents/Frameworks/B.framework/Versions/Current")!.text).toBe("A");
    expect(byName.get("Demo.bundle/Contents/Frameworks/B.framework/B")!.text).toBe("Versions/Current/B");
    expect(z.symlinks).toContainEqual({ name: "Demo.bundle/Contents/Frameworks/B.framework/B", target: "Versions/Current/B" });
    // Deflate where it pays, store where it does not (random bytes never shrink).
    expect(byName.get("Demo.bundle/Contents/Resources/big.txt")!.method).toBe(8);
    expect(byName.get("Demo.bundle/Contents/Resources/noise.bin")!.method).toBe(0);
    expect(byName.get("Demo.bundle/Contents/Resources/small-noise.bin")!.method).toBe(0);
    expect(byName.get("Demo.bundle/Contents/Resources/large-noise.bin")!.method).toBe(0);
    expect(byName.get("Demo.bundle/Contents/Resources/hex.txt")!.method).toBe(8);
    expect(byName.get("Demo.bundle/Contents/Resources/mostly-noise.bin")!.method).toBe(0);
    expect(byName.get("Demo.bundle/Contents/Resources/probed-noise.bin")!.method).toBe(0);
    // The non-ASCII name is flagged UTF-8 so Archive Utility and unzip show it right.
    expect(byName.get("Demo.bundle/Contents/Resources/Überblick – café.txt")!.utf8).toBe(true);
    const info = execFileSync("zipinfo", [z.file], { encoding: "utf8" });
    expect(info).toMatch(/^lrwxr-xr-x .* Demo\.bundle\/Contents\/Frameworks\/B\.framework\/Versions\/Current$/m);
    expect(info).toMatch(/^-rwxr-xr-x .* Demo\.bundle\/Contents\/MacOS\/Demo$/m);
  });

  it("shows observers every byte of the zip once, in order, as it is written", async () => {
    const z = threads;
    const bytes = await readFile(z.file);
    expect(observed.bytes).toBe(bytes.length);
    expect(observed.hash.digest("hex")).toBe(createHash("sha512").update(bytes).digest("hex"));
    expect(z.sha256).toBe(sha(bytes));
  });

  it("extracts with unzip to the same tree, links included", async () => {
    const z = threads;
    const out = path.join(dir, "out");
    execFileSync("unzip", ["-q", z.file, "-d", out]);
    for (const [name, data] of contents) expect(sha(await readFile(path.join(out, name))), name).toBe(sha(data));
    expect(execFileSync("readlink", [path.join(out, "Demo.bundle/Contents/Frameworks/B.framework/B")], { encoding: "utf8" }).trim()).toBe("Versions/Current/B");
  });

  it("writes the same bytes on worker threads as on the main thread", async () => {
    expect((await readFile(threads.file)).equals(await readFile(inline.file))).toBe(true);
    expect(threads.sha256).toBe(inline.sha256);
  });

  it("refuses, on either thread, a file that is not the one the listing saw: grown, replaced, a link, a pipe, or behind a swapped folder", async () => {
    const folder = path.join(dir, "listed");
    const file = path.join(folder, "changing.txt");
    await mkdir(folder);
    await writeFile(file, "0123456789");
    const st = fs.lstatSync(file);
    const job = { file, identity: { dev: st.dev, ino: st.ino, size: st.size, mtimeMs: st.mtimeMs }, offset: 0, length: 10, level: 6, mode: "auto" as const };
    const run = () => runChunkJob(job, { fs, zlib, crypto }, newChunkFrame());
    expect(Buffer.from(run().raw).toString()).toBe("0123456789");
    const changed = { code: "BUNDLE_CHANGED", message: expect.stringMatching(/changing\.txt changed while the bundle was being zipped/) };
    // Grown in place.
    await writeFile(file, "0123456789+", { flag: "a" });
    expect(run).toThrow(expect.objectContaining(changed));
    // Replaced by another file of the same size.
    await writeFile(path.join(folder, "new.txt"), "abcdefghij");
    fs.renameSync(path.join(folder, "new.txt"), file);
    expect(run).toThrow(expect.objectContaining(changed));
    // A link in its place: refused by the open itself.
    await rm(file);
    await symlink(path.join(bundle, "Contents/Info.plist"), file);
    expect(run).toThrow(expect.objectContaining({ code: "ELOOP" }));
    // A pipe in its place: the open does not block, and it is not the file.
    await rm(file);
    execFileSync("mkfifo", [file]);
    expect(run).toThrow(expect.objectContaining(changed));
    // The folder swapped for a link to another folder holding a file of that name.
    const elsewhere = path.join(dir, "elsewhere");
    await mkdir(elsewhere);
    await writeFile(path.join(elsewhere, "changing.txt"), "0123456789");
    await rm(folder, { recursive: true });
    await symlink(elsewhere, folder);
    expect(run).toThrow(expect.objectContaining(changed));
    // The same answers from a worker thread, error code included.
    const pool = ChunkPool.start(true);
    try {
      await expect(pool.run(job, 0)).rejects.toMatchObject(changed);
    } finally {
      await pool.close();
    }
    await expect(pool.run(job, 0)).rejects.toThrow(/closed/);
  });

  it("stops with an input error naming the bundle when the build changes a file during the zip, on either thread", async () => {
    const growing = path.join(dir, "Growing.bundle");
    await mkdir(path.join(growing, "Contents"), { recursive: true });
    // More than the zip reads ahead (24 MiB), so the second file is read only after the first bytes are written.
    await writeFile(path.join(growing, "Contents/a.bin"), randomBytes(30 << 20));
    await writeFile(path.join(growing, "Contents/z.txt"), "last\n");
    for (const workers of [true, false]) {
      let touched = false;
      const grow = { update: () => { if (!touched) { touched = true; fs.appendFileSync(path.join(growing, "Contents/z.txt"), "more\n"); } } };
      await expect(zipBundle(growing, path.join(dir, `growing-${workers}.zip`), { workers, observers: [grow] })).rejects.toMatchObject({
        code: "E_INPUT",
        message: expect.stringMatching(/the bundle .*Growing\.bundle changed while it was being zipped: .*z\.txt changed/),
        hint: expect.stringMatching(/after the build has finished/),
      });
      expect(touched).toBe(true);
      await writeFile(path.join(growing, "Contents/z.txt"), "last\n");
    }
  });

  it("gives every file's and link's SHA-1 as zipped, the same as Python's zipfile and hashlib compute from the zip, on either thread", async () => {
    // One Python run reads both zips (the worker threads' and the main thread's), each on its own.
    const script = `
import hashlib, json, sys, zipfile
out = []
for file in sys.argv[1:]:
    with zipfile.ZipFile(file) as z:
        out.append({i.filename: hashlib.sha1(z.read(i)).hexdigest() for i in z.infolist() if not i.filename.endswith("/")})
print(json.dumps(out))
`;
    const results = [threads, inline];
    const independent = JSON.parse(execFileSync("python3", ["-c", script, ...results.map((r) => r.file)], { encoding: "utf8" })) as Array<Record<string, string>>;
    for (const [i, result] of results.entries()) {
      const ours = Object.fromEntries([...result.contentHashes].map(([name, hash]) => [name, hash.toString("hex")]));
      expect(ours, result === threads ? "worker threads" : "main thread").toEqual(independent[i]);
      // Every kind is there: single- and multi-chunk files, stored and deflated, empty, and links (their targets' hashes).
      expect(ours["Demo.bundle/Contents/Resources/big.txt"]).toBe(createHash("sha1").update(multiChunk).digest("hex"));
      expect(ours["Demo.bundle/Contents/Resources/mostly-noise.bin"]).toBe(createHash("sha1").update(mostlyRandom).digest("hex"));
      expect(ours["Demo.bundle/Contents/Resources/empty"]).toBe(createHash("sha1").digest("hex"));
      expect(ours["Demo.bundle/Contents/Frameworks/B.framework/B"]).toBe(createHash("sha1").update("Versions/Current/B").digest("hex"));
    }
  });

  it("refuses a file rewritten in place, same size and time, between its first read and its stored rewrite (the zip would hold bytes its header's CRC-32 and its content hash are not of)", async () => {
    const tamper = path.join(dir, "Tamper.bundle");
    const file = path.join(tamper, "Contents/a.bin");
    await mkdir(path.dirname(file), { recursive: true });
    // As mostly-noise.bin: the probes say deflate, the whole file does not shrink, so it is read again to be stored.
    await writeFile(file, mostlyRandom);
    const when = new Date("2026-01-02T03:04:05Z");
    await utimes(file, when, when);
    for (const workers of [true, false]) {
      let edited = false;
      // Called at the writer's first flush, while a.bin's deflated chunks are written and before it is read again.
      const edit = {
        update: () => {
          if (edited) return;
          edited = true;
          const fd = fs.openSync(file, "r+");
          fs.writeSync(fd, Buffer.from("edited"), 0, 6, 0);
          fs.closeSync(fd);
          fs.utimesSync(file, when, when);
        },
      };
      await expect(zipBundle(tamper, path.join(dir, `tamper-${workers}.zip`), { workers, observers: [edit] })).rejects.toMatchObject({
        code: "E_INPUT",
        message: expect.stringMatching(/Tamper\.bundle changed while it was being zipped: .*a\.bin changed/),
      });
      expect(edited).toBe(true);
      await writeFile(file, mostlyRandom);
      await utimes(file, when, when);
    }
  });

  it("refuses a missing bundle with an error naming it", async () => {
    await expect(zipBundle(path.join(dir, "Nope.bundle"), path.join(dir, "e.zip"))).rejects.toThrow(/Nope\.bundle/);
  });
});
