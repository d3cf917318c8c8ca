// A lock held by one process of this checkout at a time, for work that two
// test runs in the same checkout must not do at once (the build, npx's link).
// The lock is a folder under node_modules/.cache holding its owner's pid,
// made aside and renamed into place (a rename onto an existing folder
// fails), so no one ever sees it without a pid; a lock whose owner is gone
// is removed.
import { mkdir, mkdtemp, readFile, rename, rm, writeFile } from "node:fs/promises";
import path from "node:path";

export const CHECKOUT_CACHE = path.resolve(import.meta.dirname, "..", "node_modules", ".cache");

function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return err.code === "EPERM";
  }
}

/**
 * Runs `fn` holding the lock `name` of this checkout.
 * @template T
 * @param {string} name
 * @param {() => Promise<T>} fn
 * @returns {Promise<T>}
 */
export async function withCheckoutLock(name, fn) {
  const LOCK = path.join(CHECKOUT_CACHE, `relcast-${name}.lock`);
  await mkdir(CHECKOUT_CACHE, { recursive: true });
  const mine = await mkdtemp(`${LOCK}-`);
  await writeFile(path.join(mine, "pid"), String(process.pid));
  let waitedFor;
  try {
    for (;;) {
      try {
        await rename(mine, LOCK);
        break;
      } catch (err) {
        if (err.code !== "EEXIST" && err.code !== "ENOTEMPTY") throw err;
      }
      const owner = Number(await readFile(path.join(LOCK, "pid"), "utf8").catch(() => ""));
      if (owner && !alive(owner)) {
        // Moved aside, then checked: if another waiter took the lock meanwhile, it is put back.
        const aside = `${LOCK}-stale-${process.pid}`;
        if (await rename(LOCK, aside).then(() => true, () => false)) {
          const moved = Number(await readFile(path.join(aside, "pid"), "utf8").catch(() => ""));
          if (moved === owner) await rm(aside, { recursive: true, force: true });
          else await rename(aside, LOCK).catch(() => rm(aside, { recursive: true, force: true }));
        }
        continue;
      }
      if (owner && waitedFor !== owner) {
        console.error(`${name}: waiting for process ${owner} of this checkout`);
        waitedFor = owner;
      }
      await new Promise((r) => setTimeout(r, 200));
    }
  } catch (err) {
    await rm(mine, { recursive: true, force: true });
    throw err;
  }
  try {
    return await fn();
  } finally {
    await rm(LOCK, { recursive: true, force: true });
  }
}

