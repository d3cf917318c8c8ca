import { existsSync } from "node:fs";
import { mkdtemp, open, readFile, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { RelcastError } from "../../src/core/errors.js";
import { writeFullyAt } from "../../src/core/write-fully.js";

const dirs: string[] = [];
afterAll(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

describe("writeFullyAt: the delta spill writes", () => {
  it("writes every byte at its position", async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), "spill-"));
    dirs.push(dir);
    const file = path.join(dir, "spill");
    const fh = await open(file, "wx+", 0o600);
    try {
      const big = Buffer.alloc(3 << 20, 7);
      await writeFullyAt(fh, Buffer.from("head"), 0, file);
      await writeFullyAt(fh, big, 4, file);
    } finally {
      await fh.close();
    }
    const back = await readFile(file);
    expect(back.length).toBe(4 + (3 << 20));
    expect(back.subarray(0, 4).toString()).toBe("head");
    expect(back.subarray(4).every((b) => b === 7)).toBe(true);
  });

  // /dev/full answers every write with ENOSPC, as a full temp disk does.
  it.skipIf(!existsSync("/dev/full"))("a full disk is an E_INPUT error naming the temp folder and the fix (free space or TMPDIR), not an internal error", async () => {
    const fh = await open("/dev/full", "r+");
    try {
      const err = await writeFullyAt(fh, Buffer.alloc(1024, 1), 0, "/dev/full").then(() => undefined, (e: unknown) => e);
      expect(err).toBeInstanceOf(RelcastError);
      const e = err as RelcastError;
      expect(e.code).toBe("E_INPUT");
      expect(e.message).toContain("no space left on the device in the temp folder /dev");
      expect(e.hint).toContain("TMPDIR");
      expect((e.cause as NodeJS.ErrnoException).code).toBe("ENOSPC");
    } finally {
      await fh.close();
    }
  });
});
