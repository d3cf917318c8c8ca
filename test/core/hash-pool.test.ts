import { spawn } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { Readable } from "node:stream";
import { describe, expect, it } from "vitest";
import { INLINE_HASH_BELOW_BYTES, hashOffThread } from "../../src/core/hash-pool.js";
import { REPO_ROOT } from "../helpers/run-cli.js";

function chunks(total: number, size: number): Buffer[] {
  const out: Buffer[] = [];
  for (let at = 0; at < total; at += size) out.push(randomBytes(Math.min(size, total - at)));
  return out;
}

describe("hashing on worker threads", () => {
  it("gives the SHA-256 and the prefixed SHA-512 of the bytes in order, for several streams at once", async () => {
    const streams = [chunks(5 << 20, 1 << 20), chunks(3 << 20, 65_536 + 3), chunks(0, 1), chunks(20 << 20, 1 << 20)];
    const prefix = randomBytes(64);
    const expected = streams.map((parts) => ({
      sha256: createHash("sha256").update(Buffer.concat(parts)).digest("hex"),
      sha512: createHash("sha512").update(prefix).update(Buffer.concat(parts)).digest("hex"),
      size: parts.reduce((n, p) => n + p.length, 0),
    }));
    // Copies go in, since transferring hands each chunk's memory to the worker.
    const results = await Promise.all(streams.map((parts) => hashOffThread(Readable.from(parts.map((p) => Buffer.from(p))), { sha512Prefix: prefix, transfer: true })));
    results.forEach((r, i) => {
      expect(r.sha256).toBe(expected[i]!.sha256);
      expect(r.sha512!.toString("hex")).toBe(expected[i]!.sha512);
      expect(r.sizeBytes).toBe(expected[i]!.size);
    });
  });

  it("copies chunks the caller keeps (no transfer), and chunks that are views into a larger buffer", async () => {
    const big = randomBytes(4 << 20);
    const views = [big.subarray(0, 1000), big.subarray(1000, 3 << 20), big.subarray(3 << 20)];
    const got = await hashOffThread(Readable.from(views), { transfer: true });
    expect(got.sha256).toBe(createHash("sha256").update(big).digest("hex"));
    expect(got.sha512).toBeUndefined();
    const kept = chunks(2 << 20, 300_000);
    const before = kept.map((k) => k.length);
    await hashOffThread(Readable.from(kept));
    expect(kept.map((k) => k.length)).toEqual(before);
  });

  it("fails with the source's error and keeps working for the next stream", async () => {
    async function* broken() {
      yield randomBytes(1000);
      throw new Error("disk went away");
    }
    await expect(hashOffThread(broken())).rejects.toThrow("disk went away");
    const data = randomBytes(10_000);
    expect((await hashOffThread(Readable.from([data]))).sha256).toBe(createHash("sha256").update(data).digest("hex"));
  });
});

describe("a process that used the hash pool", () => {
  it("exits on its own once its hashing is done, after one stream at a time on several cores", async () => {
    // The built module, in a process of its own: one file hashed, then another once the first is done. The pool
    // once made a second worker for the second (the first being idle) and gave the stream to the first; the
    // unused worker was ref'd by its own listener and the process (`relcast verify`) never exited.
    const dir = await mkdtemp(path.join(os.tmpdir(), "relcast-hash-pool-"));
    try {
      const file = path.join(dir, "data.bin");
      // Above the size hashed on the calling thread, so each file goes to the pool's workers.
      const size = INLINE_HASH_BELOW_BYTES + 4096;
      await writeFile(file, randomBytes(size));
      const script = `
        import { createRequire, syncBuiltinESMExports } from "node:module";
        import { openSync, closeSync } from "node:fs";
        const threads = createRequire(import.meta.url)("node:worker_threads");
        let started = 0;
        threads.Worker = class extends threads.Worker { constructor(...args) { super(...args); started++; } };
        syncBuiltinESMExports();
        const { hashFileOffThread } = await import(${JSON.stringify(path.join(REPO_ROOT, "dist/src/core/hash-pool.js"))});
        for (let i = 0; i < 3; i++) {
          const fd = openSync(${JSON.stringify(file)}, "r");
          await hashFileOffThread(fd, ${size}, false);
          closeSync(fd);
        }
        console.log("hashed on " + started + " worker(s)");`;
      const scriptFile = path.join(dir, "hash-twice.mjs");
      await writeFile(scriptFile, script);
      const child = spawn(process.execPath, [scriptFile], { stdio: ["ignore", "pipe", "pipe"]});
      let out = "";
      child.stdout.on("data", (d: Buffer) => (out += d.toString()));
      child.stderr.on("data", (d: Buffer) => (out += d.toString()));
      const exited = await new Promise<number | "lingered">((resolve) => {
        // Far above the milliseconds it needs; a process still there then is one that would never leave.
        const limit = setTimeout(() => {
          child.kill("SIGKILL");
          resolve("lingered");
        }, 30_000);
        child.on("exit", (code) => {
          clearTimeout(limit);
          resolve(code ?? -1);
        });
      });
      expect(out).toMatch(/hashed on [1-9]\d* worker\(s\)/);
      expect(exited, out).toBe(0);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe("a small file", () => {
  it("is hashed on the calling thread, as a worker would: size, SHA-256, the kept bytes, and a file that grew after it was sized; no worker starts", async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), "relcast-hash-small-"));
    try {
      const small = randomBytes(INLINE_HASH_BELOW_BYTES - 1);
      const empty = Buffer.alloc(0);
      await writeFile(path.join(dir, "small.bin"), small);
      await writeFile(path.join(dir, "empty.bin"), empty);
      // Each case: [file, size passed, keep]; "grew" is sized at 1,000 bytes but holds all of `small`.
      const cases = [["small.bin", small.length, true], ["small.bin", small.length, false], ["empty.bin", 0, true], ["small.bin", 1000, true]];
      const script = `
        import { createRequire, syncBuiltinESMExports } from "node:module";
        import { openSync, closeSync } from "node:fs";
        import { createHash } from "node:crypto";
        const threads = createRequire(import.meta.url)("node:worker_threads");
        let started = 0;
        threads.Worker = class extends threads.Worker { constructor(...args) { super(...args); started++; } };
        syncBuiltinESMExports();
        const { hashFileOffThread } = await import(${JSON.stringify(path.join(REPO_ROOT, "dist/src/core/hash-pool.js"))});
        const out = [];
        for (const [name, size, keep] of ${JSON.stringify(cases)}) {
          const fd = openSync(${JSON.stringify(dir)} + "/" + name, "r");
          const got = await hashFileOffThread(fd, size, keep);
          closeSync(fd);
          out.push({ sizeBytes: got.sizeBytes, sha256: got.sha256, body: got.body === undefined ? null : createHash("sha256").update(got.body).digest("hex"), bodyLength: got.body?.length ?? null });
        }
        console.log(JSON.stringify({ started, out }));`;
      const scriptFile = path.join(dir, "hash-small.mjs");
      await writeFile(scriptFile, script);
      const child = spawn(process.execPath, [scriptFile], { stdio: ["ignore", "pipe", "pipe"] });
      let stdout = "";
      let stderr = "";
      child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
      child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
      const code = await new Promise<number>((resolve) => child.on("exit", (c) => resolve(c ?? -1)));
      expect(code, stderr).toBe(0);
      const sha = (b: Buffer) => createHash("sha256").update(b).digest("hex");
      expect(JSON.parse(stdout)).toEqual({
        started: 0,
        out: [
          { sizeBytes: small.length, sha256: sha(small), body: sha(small), bodyLength: small.length },
          { sizeBytes: small.length, sha256: sha(small), body: null, bodyLength: null },
          { sizeBytes: 0, sha256: sha(empty), body: sha(empty), bodyLength: 0 },
          // Sized at 1,000 bytes, read to its end: the whole file is hashed and no partial body is handed back.
          { sizeBytes: small.length, sha256: sha(small), body: null, bodyLength: null },
        ],
      });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
