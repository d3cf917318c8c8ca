import { watch } from "node:fs";
import { mkdtemp, readdir, rm, utimes, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { withFileLock } from "../../src/store/folder-lock.js";

async function lockDir(): Promise<string> {
  return mkdtemp(path.join(os.tmpdir(), "relcast-lock-"));
}

describe("folder lock", () => {
  it("respects a fresh lock whose token cannot be read yet (it was once broken as stale: two writers, a lost record)", async () => {
    const dir = await lockDir();
    const lock = path.join(dir, ".relcast-lock-catalog.json");
    await writeFile(lock, "");
    let entered = false;
    // Every attempt of the waiter makes (and removes) a token file `<lock>-<hex>`: watch until it has tried
    // and judged the lock 10 times, rather than sleeping and hoping it did.
    const attempts = new Set<string>();
    const watcher = watch(dir);
    const tried10 = new Promise<void>((resolve) => watcher.on("change", (_event, name) => {
      if (String(name).startsWith(".relcast-lock-catalog.json-")) attempts.add(String(name));
      if (attempts.size >= 10) resolve();
    }));
    let enteredNow: () => void = () => {};
    const enteredEarly = new Promise<void>((resolve) => (enteredNow = resolve));
    const waiting = withFileLock(lock, async () => {
      entered = true;
      enteredNow();
    });
    await Promise.race([tried10, enteredEarly]); // a lock broken as stale shows at once, not as a timeout
    watcher.close();
    expect(entered).toBe(false);
    await rm(lock);
    await waiting;
    expect(entered).toBe(true);
  });

  it("takes over a lock with an unreadable token once the file is older than any critical section", async () => {
    const dir = await lockDir();
    const lock = path.join(dir, ".relcast-lock-x");
    await writeFile(lock, "garbage");
    const old = new Date(Date.now() - 10 * 60_000);
    await utimes(lock, old, old);
    let entered = false;
    await withFileLock(lock, async () => {
      entered = true;
    });
    expect(entered).toBe(true);
  });

  it("takes over the lock of a process that is gone, and keeps no temp files", async () => {
    const dir = await lockDir();
    const lock = path.join(dir, ".relcast-lock-y");
    await writeFile(lock, `999999999:${Date.now()}:deadbeef`);
    await withFileLock(lock, async () => undefined);
    expect(await readdir(dir)).toEqual([]);
  });

  it("lets exactly one of many concurrent holders in at a time", async () => {
    const dir = await lockDir();
    const lock = path.join(dir, ".relcast-lock-z");
    let inside = 0;
    let maxInside = 0;
    await Promise.all(Array.from({ length: 30 }, () => withFileLock(lock, async () => {
      inside++;
      maxInside = Math.max(maxInside, inside);
      await new Promise((r) => setTimeout(r, 2));
      inside--;
    })));
    expect(maxInside).toBe(1);
  });
});
