import { describe, expect, it } from "vitest";
import { deadlineTick, UpstreamDeadlines, type Watched } from "../../src/gateway/upstream-deadlines.js";

describe("upstream deadlines", () => {
  it("sweeps at a quarter of the smallest timeout, from 25 ms to 1 s", () => {
    expect(deadlineTick([30_000])).toBe(1000);
    expect(deadlineTick([2000, 400, 30_000])).toBe(100);
    expect(deadlineTick([100])).toBe(25);
    expect(deadlineTick([])).toBe(1000);
  });

  it("expires an idle request once, not before its timeout, forgets finished ones, and stops sweeping when nothing is left", async () => {
    const deadlines = new UpstreamDeadlines(25);
    const started = performance.now();
    let finishedOne = false;
    const finished: Watched = { deadlineSlot: -1, deadlineMoved: 0, deadlineIdleSince: 0, timeoutMs: 50, bytesMoved: () => 0, finished: () => true, expire: () => (finishedOne = true) };
    const expiredAt = await new Promise<number>((resolve) => {
      let calls = 0;
      const idle: Watched = {
        deadlineSlot: -1, deadlineMoved: 0, deadlineIdleSince: 0,
        timeoutMs: 100,
        bytesMoved: () => 7,
        finished: () => false,
        expire: () => {
          calls++;
          expect(calls).toBe(1);
          resolve(performance.now());
        },
      };
      deadlines.watch(finished);
      deadlines.watch(idle);
    });
    expect(expiredAt - started).toBeGreaterThanOrEqual(100);
    expect(finishedOne).toBe(false);
    expect(deadlines.size).toBe(0);
  });
});
