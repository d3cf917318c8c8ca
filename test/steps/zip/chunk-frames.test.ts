import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import * as fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CHUNK_BYTES, type ChunkJob } from "../../../src/steps/zip/chunk-job.js";
import { ChunkPool, type PooledResult } from "../../../src/steps/zip/chunk-pool.js";
import { zipBundle } from "../../../src/steps/zip/reproducible-zip.js";

/**
 * The zip step's memory is a fixed set of chunk frames reused job after job
 * (no buffer per chunk), and the writer copies what it is given into one
 * reused write buffer: checked here for bounds, for the bytes after reuse,
 * and by an independent reader of every local header.
 */

/** Python reads each local header where the central directory points and compares its CRC and sizes with the central record. */
const PY_LOCAL_HEADERS = `
import json, struct, sys, zipfile
data = open(sys.argv[1], "rb").read()
out = []
with zipfile.ZipFile(sys.argv[1]) as z:
    for i in z.infolist():
        at = i.header_offset
        sig, crc, csize, usize, nlen = struct.unpack("<I10xIIIH", data[at:at + 28])
        name = data[at + 30:at + 30 + nlen].decode("utf-8")
        out.append({"name": i.filename, "offset": at, "end": at + 30 + nlen + struct.unpack("<H", data[at + 28:at + 30])[0],
                    "ok": sig == 0x04034b50 and name == i.filename and crc == i.CRC and csize == i.compress_size and usize == i.file_size})
print(json.dumps(out))
`;

interface LocalHeader { name: string; offset: number; end: number; ok: boolean }
const localHeaders = (zip: string): LocalHeader[] => JSON.parse(execFileSync("python3", ["-c", PY_LOCAL_HEADERS, zip], { encoding: "utf8" })) as LocalHeader[];

describe("zip step memory: fixed chunk frames and one write buffer", () => {
  let dir: string;
  let file: string;
  let bytes: Buffer;

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), "relcast-frames-"));
    file = path.join(dir, "data.bin");
    bytes = randomBytes(3 * CHUNK_BYTES + 12345);
    await writeFile(file, bytes);
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  const job = (offset: number): ChunkJob => {
    const st = fs.statSync(file);
    return { file, identity: { dev: st.dev, ino: st.ino, size: st.size, mtimeMs: st.mtimeMs }, offset, length: Math.min(CHUNK_BYTES, st.size - offset), level: 1, mode: "store" };
  };
  const expectChunk = (result: PooledResult, offset: number) => {
    expect(Buffer.from(result.raw).equals(bytes.subarray(offset, offset + CHUNK_BYTES))).toBe(true);
  };

  for (const threads of [true, false]) {
    it(`holds at most its fixed frames however many jobs wait, keeps one for the job the writer needs next, and reuses them with the right bytes (${threads ? "worker threads" : "main thread"})`, async () => {
      const pool = ChunkPool.start(threads);
      try {
        const limit = pool.frameLimit.chunk;
        expect(limit).toBeGreaterThanOrEqual(2);
        const offsets = (i: number) => (i % 4) * CHUNK_BYTES;
        // Read-ahead: three times as many jobs as frames, none released yet.
        const ahead = Array.from({ length: 3 * limit }, (_, i) => ({ offset: offsets(i), result: pool.run(job(offsets(i)), 100 + i) }));
        // All but one frame go to the read-ahead...
        const early = await Promise.all(ahead.slice(0, limit - 1).map((a) => a.result));
        early.forEach((r, i) => expectChunk(r, ahead[i]!.offset));
        // ...and a job that comes before all of them (a file's next chunk, a stored rewrite) still gets the last one.
        const urgent = await pool.run(job(CHUNK_BYTES), 0);
        expectChunk(urgent, CHUNK_BYTES);
        expect(pool.framesMade.chunk).toBe(limit);
        pool.release(urgent);
        early.forEach((r) => pool.release(r));
        // The rest run in the same frames, released in order as a writer does, each with its own bytes.
        for (const a of ahead.slice(limit - 1)) {
          const r = await a.result;
          expectChunk(r, a.offset);
          pool.release(r);
        }
        expect(pool.framesMade.chunk).toBe(limit);
      } finally {
        await pool.close();
      }
    });
  }

  for (const threads of [true, false]) {
    it(`runs whole small files in small frames of their own, bounded too, and a small file is not held up by chunks waiting for a frame (${threads ? "worker threads" : "main thread"})`, async () => {
      const smallDir = path.join(dir, `small-${threads}`);
      await mkdir(smallDir, { recursive: true });
      const smallJob = async (i: number): Promise<ChunkJob> => {
        const f = path.join(smallDir, `f${i}.bin`);
        await writeFile(f, bytes.subarray(i, i + 1000 + i));
        const st = fs.statSync(f);
        return { file: f, identity: { dev: st.dev, ino: st.ino, size: st.size, mtimeMs: st.mtimeMs }, offset: 0, length: st.size, level: 1, mode: "store" };
      };
      const pool = ChunkPool.start(threads);
      try {
        const { chunk, small } = pool.frameLimit;
        // Every chunk frame is held by read-ahead the writer has not taken (and more chunks wait)...
        const chunks = Array.from({ length: chunk + 3 }, (_, i) => pool.run(job((i % 4) * CHUNK_BYTES), 100 + i));
        const heldChunks = await Promise.all(chunks.slice(0, chunk - 1));
        // ...yet whole small files queued after them run, in small frames, up to that kind's own limit.
        const smallJobs = await Promise.all(Array.from({ length: 2 * small }, (_, i) => smallJob(i)));
        const smalls = smallJobs.map((j, i) => pool.run(j, 1000 + i));
        const first = await Promise.all(smalls.slice(0, small - 1));
        first.forEach((r, i) => expect(Buffer.from(r.raw).equals(bytes.subarray(i, i + 1000 + i))).toBe(true));
        expect(pool.framesMade).toEqual({ chunk: chunk - 1, small: small - 1 });
        // The last frame of each kind goes only to a job before every holder of that kind: a small file before them all gets it.
        const urgent = await pool.run(await smallJob(2 * small), 50);
        expect(Buffer.from(urgent.raw).equals(bytes.subarray(2 * small, 2 * small + 1000 + 2 * small))).toBe(true);
        expect(pool.framesMade).toEqual({ chunk: chunk - 1, small });
        pool.release(urgent);
        for (const r of [...heldChunks, ...first]) pool.release(r);
        // The rest run as frames come back, each with its bytes.
        const lengths = await Promise.all([...chunks.slice(chunk - 1), ...smalls.slice(small - 1)].map(async (p) => {
          const r = await p;
          const length = r.raw.length;
          pool.release(r);
          return length;
        }));
        expect(lengths.every((n) => n > 0)).toBe(true);
        expect(pool.framesMade.chunk).toBeLessThanOrEqual(chunk);
        expect(pool.framesMade.small).toBe(small);
      } finally {
        await pool.close();
      }
    });
  }

  it("patches a local header that straddles a flush of the write buffer in the file and in the buffer alike", async () => {
    const bundle = path.join(dir, "Straddle.bundle");
    await mkdir(path.join(bundle, "Contents"), { recursive: true });
    await writeFile(path.join(bundle, "Contents/b.txt"), "after the boundary\n");
    const flushAt = 4 << 20; // the writer's buffer size
    // Random bytes are stored as they are: first find where b.txt's header lands, then size a.bin so it starts 10 bytes before the flush.
    let size = flushAt - 4096;
    await writeFile(path.join(bundle, "Contents/a.bin"), randomBytes(size));
    await zipBundle(bundle, path.join(dir, "probe.zip"));
    const probe = localHeaders(path.join(dir, "probe.zip")).find((h) => h.name.endsWith("b.txt"))!;
    size += flushAt - 10 - probe.offset;
    await writeFile(path.join(bundle, "Contents/a.bin"), randomBytes(size));
    for (const workers of [true, false]) {
      const zip = path.join(dir, `straddle-${workers}.zip`);
      const result = await zipBundle(bundle, zip, { workers });
      const headers = localHeaders(zip);
      const b = headers.find((h) => h.name.endsWith("b.txt"))!;
      expect(b.offset).toBeLessThan(flushAt);
      expect(b.end).toBeGreaterThan(flushAt);
      expect(headers.filter((h) => !h.ok)).toEqual([]);
      expect(result.sha256).toBe(execFileSync("sha256sum", [zip], { encoding: "utf8" }).split(" ")[0]);
      expect(execFileSync("unzip", ["-tq", zip], { encoding: "utf8" })).toMatch(/No errors detected/);
      expect((await readFile(zip)).length).toBe(result.sizeBytes);
    }
  });
});
