import { describe, expect, it } from "vitest";
import { PartBuffers } from "../../src/store/s3-part-buffers.js";

describe("an S3 store's part buffers", () => {
  it("makes at most `count` buffers, hands a released one to the next waiting part, and reuses the same memory", async () => {
    const buffers = new PartBuffers(1024, 2);
    const a = await buffers.acquire(1024);
    const b = await buffers.acquire(10);
    expect(a).not.toBe(b);
    expect(a.length).toBe(1024);
    expect(b.length).toBe(1024);
    // A third part waits for one of the two: it gets the one released, not a new buffer.
    const third = buffers.acquire(512);
    buffers.release(a);
    expect(await third).toBe(a);
    buffers.release(b);
    buffers.release(a);
    const again = [await buffers.acquire(1), await buffers.acquire(1)];
    expect(again.includes(a) && again.includes(b)).toBe(true);
    expect(buffers.buffersMade).toBe(2);
  });

  it("gives a part larger than the part size (a file of more than 10,000 parts) a buffer of its own, never kept", async () => {
    const buffers = new PartBuffers(1024, 1);
    const big = await buffers.acquire(4096);
    expect(big.length).toBe(4096);
    buffers.release(big);
    const small = await buffers.acquire(100);
    expect(small.length).toBe(1024);
    expect(small.buffer).not.toBe(big.buffer);
    expect(buffers.buffersMade).toBe(1);
  });
});
