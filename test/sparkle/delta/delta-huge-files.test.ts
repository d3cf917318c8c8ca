import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdir, mkdtemp, open, readFile, rm, truncate, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RelcastError } from "../../../src/core/errors.js";
import { applyDelta, readDeltaInfo } from "../../../src/sparkle/delta/delta-apply.js";
import { applyDeltaToTree } from "../../../src/sparkle/delta/delta-apply-tree.js";
import { createDelta } from "../../../src/sparkle/delta/delta-create.js";
import { limitsForNewTree } from "../../../src/sparkle/delta/delta-limits.js";
import { hashTree } from "../../../src/sparkle/delta/tree-hash.js";
import { wholeFilesNotes } from "../../../src/sparkle/delta/whole-files-note.js";
import { CMD, rawBody, S_IFREG, writeRawDelta } from "../../helpers/hostile-delta.js";
import { runCli } from "../../helpers/run-cli.js";

/**
 * Changed files too big to diff are shipped whole, and the whole files'
 * incompressible blocks are stored, not compressed. "Huge" is scaled down
 * here: the diff limit is 1 MiB and RELCAST_DELTA_STORE_MIN_BYTES makes a
 * 3 MB file big enough to be judged (the defaults are 16 MiB and 64 MiB; a
 * real 5 GiB file is the last describe of this file). The bodies are read back
 * by Python's lzma and zlib (raw DEFLATE), `xz -t` and `xz --list`, applied by
 * relcast's appliers (the xz program and the WebAssembly decoder) and the
 * result's tree hash is Python's.
 */
const MiB = 1024 * 1024;
let dir: string;
let oldRoot: string;
let newRoot: string;
let model: Buffer;
const storeMin = process.env.RELCAST_DELTA_STORE_MIN_BYTES;

const python = (script: string, ...args: string[]): string => execFileSync("python3", [path.join(import.meta.dirname, script), ...args], { encoding: "utf8" }).trim();
/** Python's tree hash of the new tree: the same folder for every case here, so computed once. */
let newTreeHash: string | undefined;
const pythonNewTreeHash = (): string => (newTreeHash ??= python("sparkle-tree-hash.py", newRoot));

/** Python reads the container body (lzma: one xz stream; zlib: one raw DEFLATE stream) and answers where `needle` lies in the payload. */
function pythonFind(deltaFile: string, needleFile: string): { length: number; at: number } {
  const script = `
import lzma, sys, zlib, json
data = open(sys.argv[1], "rb").read()
needle = open(sys.argv[2], "rb").read()
assert data[:4] == b"spk!"
if data[4] == 2:
    d = lzma.LZMADecompressor(format=lzma.FORMAT_XZ)
else:
    assert data[4] == 5
    d = zlib.decompressobj(wbits=-15)
body = d.decompress(data[6:])
assert d.eof and d.unused_data == b""
print(json.dumps({"length": len(body), "at": body.find(needle)}))
`;
  return JSON.parse(execFileSync("python3", ["-c", script, deltaFile, needleFile], { encoding: "utf8" })) as { length: number; at: number };
}

async function bundle(root: string, files: Record<string, Buffer | string>): Promise<void> {
  await mkdir(path.join(root, "Contents", "Resources"), { recursive: true });
  await writeFile(path.join(root, "Contents", "Info.plist"), "<plist><dict/></plist>\n");
  for (const [rel, bytes] of Object.entries(files)) await writeFile(path.join(root, rel), bytes);
}

beforeAll(async () => {
  process.env.RELCAST_DELTA_STORE_MIN_BYTES = String(MiB);
  dir = await mkdtemp(path.join(os.tmpdir(), "relcast-delta-huge-"));
  oldRoot = path.join(dir, "old", "Bridge.bundle");
  newRoot = path.join(dir, "new", "Bridge.bundle");
  model = randomBytes(3_000_000);
  const text = Array.from({ length: 5_000 }, (_, i) => `token ${i} ${i * 7}`).join("\n");
  await bundle(oldRoot, { "Contents/Resources/model.gguf": randomBytes(3_000_000), "Contents/Resources/vocab.txt": text });
  await bundle(newRoot, { "Contents/Resources/model.gguf": model, "Contents/Resources/vocab.txt": `${text}\nnew token` });
  await writeFile(path.join(dir, "model.bin"), model);
});
afterAll(async () => {
  if (storeMin === undefined) delete process.env.RELCAST_DELTA_STORE_MIN_BYTES;
  else process.env.RELCAST_DELTA_STORE_MIN_BYTES = storeMin;
  await rm(dir, { recursive: true, force: true });
});

describe.each(["lzma", "zlib"] as const)("a changed file over the diff limit, %s", (compression) => {
  let delta: string;
  let summary: Awaited<ReturnType<typeof createDelta>>;
  beforeAll(async () => {
    delta = path.join(dir, `${compression}.delta`);
    summary = await createDelta(oldRoot, newRoot, delta, { compression, diffLimitBytes: MiB });
  });

  it("is shipped whole and stored uncompressed, and the summary says which file and why", () => {
    expect(summary.overLimit).toEqual([{ rel: "/Contents/Resources/model.gguf", oldSize: 3_000_000, size: 3_000_000 }]);
    expect(summary.stored).toEqual([{ rel: "/Contents/Resources/model.gguf", size: 3_000_000, storedBytes: 3_000_000 }]);
    // The small text file was diffed, and the diff compressed: the delta is the model plus little.
    expect(summary.counts.diffed).toBe(1);
    expect(summary.size).toBeLessThan(3_000_000 + 64 * 1024);
    const notes = wholeFilesNotes(summary);
    expect(notes[0]).toContain("Contents/Resources/model.gguf (3000000 → 3000000 bytes)");
    expect(notes[0]).toContain("over the 1 MiB diff limit");
    expect(notes[1]).toContain("stored uncompressed");
    expect(notes[1]).toContain("Contents/Resources/model.gguf (3000000 of 3000000 bytes)");
  });

  it("is one complete stream Python decompresses, holding the new file's bytes", () => {
    const found = pythonFind(delta, path.join(dir, "model.bin"));
    expect(found.at).toBeGreaterThan(0);
    expect(found.length).toBeGreaterThan(3_000_000);
  });

  it.runIf(compression === "lzma")("passes xz -t, as one stream of one LZMA2 block with a CRC32 check", async () => {
    const body = path.join(dir, "lzma.body.xz");
    await writeFile(body, (await readFile(delta)).subarray(6));
    execFileSync("xz", ["-t", body]);
    const listed = execFileSync("xz", ["--robot", "--list", "-vv", body], { encoding: "utf8" });
    const totals = listed.split("\n").find((l) => l.startsWith("totals"))!.split("\t");
    expect(totals.slice(1, 3)).toEqual(["1", "1"]); // streams, blocks
    expect(listed).toContain("CRC32");
    expect(listed).toContain("--lzma2=dict=8MiB");
  });

  it("is applied by relcast's appliers (on disk and in memory) to the new tree, whose hash Python computes", async () => {
    const out = path.join(dir, `out-${compression}`, "Bridge.bundle");
    const applied = await applyDelta(oldRoot, out, delta);
    expect(applied.header.afterHash).toBe(summary.afterHash);
    expect((await readFile(path.join(out, "Contents/Resources/model.gguf"))).equals(model)).toBe(true);
    expect(python("sparkle-tree-hash.py", out)).toBe(pythonNewTreeHash());
    const newTree = await hashTree(newRoot);
    expect((await applyDeltaToTree(await hashTree(oldRoot), delta, { limits: limitsForNewTree(newTree) })).afterHash).toBe(pythonNewTreeHash());
  });
});

describe("storing is judged block by block, and only where it pays", () => {
  it("a big file whose first 16 MiB compress and whose rest is random: only the random block is stored", async () => {
    const root = path.join(dir, "mixed");
    const header = Buffer.alloc(16 * MiB, '{"tokens":["a","b"]},');
    const tail = randomBytes(2 * MiB);
    expect(header.length).toBe(16 * MiB);
    await bundle(path.join(root, "old"), {});
    await bundle(path.join(root, "new"), { "Contents/Resources/model.gguf": Buffer.concat([header, tail]) });
    const delta = path.join(root, "mixed.delta");
    const summary = await createDelta(path.join(root, "old"), path.join(root, "new"), delta, { compression: "lzma" });
    expect(summary.stored).toEqual([{ rel: "/Contents/Resources/model.gguf", size: 18 * MiB, storedBytes: 2 * MiB }]);
    expect(summary.size).toBeLessThan(2 * MiB + 4 * MiB);
    execFileSync("python3", [path.join(import.meta.dirname, "read-delta.py"), delta]);
    await applyDelta(path.join(root, "old"), path.join(root, "out"), delta);
    expect(python("sparkle-tree-hash.py", path.join(root, "out"))).toBe(summary.afterHash);
  });

  it("bzip2 has no stored form: nothing is stored, and the delta still applies", async () => {
    const delta = path.join(dir, "bzip2.delta");
    const summary = await createDelta(oldRoot, newRoot, delta, { compression: "bzip2", diffLimitBytes: MiB });
    expect(summary.stored).toEqual([]);
    expect(summary.overLimit).toHaveLength(1);
    expect((await applyDelta(oldRoot, path.join(dir, "out-bzip2"), delta)).header.afterHash).toBe(summary.afterHash);
  });

  it("the WebAssembly xz decoder (no xz on the PATH) reads a body with stored chunks", async () => {
    const delta = path.join(dir, "lzma.delta");
    const emptyBin = path.join(dir, "empty-bin");
    await mkdir(emptyBin, { recursive: true });
    const realPath = process.env.PATH;
    process.env.PATH = emptyBin;
    try {
      const out = path.join(dir, "out-wasm", "Bridge.bundle");
      await applyDelta(oldRoot, out, delta);
      expect((await readFile(path.join(out, "Contents/Resources/model.gguf"))).equals(model)).toBe(true);
    } finally {
      process.env.PATH = realPath;
    }
  });
});

describe("limits", () => {
  it("a diff limit over 1 GiB is refused: the diff would need about 6 times the file in memory", async () => {
    const err = await createDelta(oldRoot, newRoot, path.join(dir, "x.delta"), { compression: "none", diffLimitBytes: 2 * 1024 * MiB }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RelcastError);
    expect((err as RelcastError).message).toContain("from 0 to 1073741824 (1 GiB)");
    const r = await runCli(["delta", "create", "--diff-limit-mib", "2048", oldRoot, newRoot, path.join(dir, "y.delta")]);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain("--diff-limit-mib must be a number from 0 to 1024");
  });

  it("delta info reads a delta whose whole file is 5 GiB (no 2 GiB cap), and still refuses a claim past 64 GiB", async () => {
    const zeros = "00".repeat(20);
    const file = path.join(dir, "five-gib.delta");
    await writeRawDelta(file, rawBody(zeros, zeros, [{ rel: "/Contents/Resources/model.gguf", commands: CMD.extract, mode: S_IFREG | 0o644, dataLength: 5 * 1024 ** 3 }]), "none");
    const info = await readDeltaInfo(file);
    expect(info.items[0]).toMatchObject({ rel: "/Contents/Resources/model.gguf", dataLength: 5 * 1024 ** 3 });
    await writeRawDelta(file, rawBody(zeros, zeros, [{ rel: "/Contents/Resources/model.gguf", commands: CMD.extract, mode: S_IFREG | 0o644, dataLength: 65 * 1024 ** 3 }]), "none");
    await expect(readDeltaInfo(file)).rejects.toThrow(/claims 69793218560 bytes, more than the 68719476736/);
  });
});

/**
 * A real 5 GiB changed file (sparse: it costs no disk until the delta's
 * scratch payload is written): shipped whole, past the 4 GiB of a plain zip
 * field and the 2 GiB of a Node buffer, and applied back in memory to the new
 * tree's hash. About two minutes of CPU on two cores (hashing 10 GiB, writing
 * and inflating 5 GiB), so it runs with the other full-size cases under
 * RELCAST_ZIP64_FULL=1 (docs/zip.md); the scaled-down cases are in
 * the describes above.
 */
const SPARSE_GIB = 1024 ** 3;
const SPARSE_SIZE = 5 * SPARSE_GIB;

async function sparseBundle(root: string, change?: { at: number; bytes: Buffer }): Promise<string> {
  await mkdir(path.join(root, "Contents", "Resources"), { recursive: true });
  await writeFile(path.join(root, "Contents", "Info.plist"), "<plist><dict/></plist>\n");
  const file = path.join(root, "Contents", "Resources", "model.gguf");
  await writeFile(file, "");
  await truncate(file, SPARSE_SIZE);
  if (change) {
    const fh = await open(file, "r+");
    await fh.write(change.bytes, 0, change.bytes.length, change.at);
    await fh.close();
  }
  return file;
}

describe.runIf(process.env.RELCAST_ZIP64_FULL === "1")("a changed 5 GiB file", () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), "relcast-delta-sparse-"));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("is shipped whole (zlib), its delta item claims 5 GiB, and applying it in memory gives the new tree, whose file Python hashes", async () => {
    const oldRoot = path.join(dir, "old", "Bridge.bundle");
    const newRoot = path.join(dir, "new", "Bridge.bundle");
    await sparseBundle(oldRoot);
    const changed = await sparseBundle(newRoot, { at: 4.5 * SPARSE_GIB, bytes: randomBytes(1024 * 1024) });
    const [oldTree, newTree] = [await hashTree(oldRoot), await hashTree(newRoot)];
    const pythonSha1 = execFileSync("python3", ["-c", "import hashlib,sys\nh=hashlib.sha1()\nf=open(sys.argv[1],'rb')\nfor b in iter(lambda: f.read(1<<20), b''): h.update(b)\nprint(h.hexdigest())", changed], { encoding: "utf8" }).trim();
    expect(newTree.fileHashes.get("/Contents/Resources/model.gguf")!.toString("hex")).toBe(pythonSha1);

    const delta = path.join(dir, "huge.delta");
    const summary = await createDelta(oldRoot, newRoot, delta, { compression: "zlib", oldTree, newTree, tmpDir: dir });
    expect(summary.overLimit).toEqual([{ rel: "/Contents/Resources/model.gguf", oldSize: SPARSE_SIZE, size: SPARSE_SIZE }]);
    const info = await readDeltaInfo(delta);
    expect(info.items.find((i) => i.rel === "/Contents/Resources/model.gguf")!.dataLength).toBe(SPARSE_SIZE);
    const applied = await applyDeltaToTree(oldTree, delta, { limits: limitsForNewTree(newTree) });
    expect(applied.afterHash).toBe(newTree.hash.toString("hex"));
  }, 600_000);
});
