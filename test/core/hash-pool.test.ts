import { createHash, randomBytes } from "node:crypto";
import { Readable } from "node:stream";
import { describe, expect, it } from "vitest";
import { hashOffThread } from "../../src/core/hash-pool.js";

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
