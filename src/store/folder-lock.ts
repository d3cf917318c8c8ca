import { link, readFile, stat, unlink, writeFile } from "node:fs/promises";
import { randomBytes } from "node:crypto";
import { RelcastError } from "../core/errors.js";

// A live holder is only presumed hung after this long; the critical section takes milliseconds.
const STALE_AFTER_MS = 120_000;
const GIVE_UP_AFTER_MS = 180_000;

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * Creates the lock file already holding its token: the token is written to
 * a temp file that is then hard-linked into place (fails if the lock
 * exists). A lock created empty and filled afterwards could be read empty by
 * a waiter, judged stale and removed while its holder is inside.
 */
async function tryCreateLock(lockPath: string, token: string): Promise<boolean> {
  const temp = `${lockPath}-${randomBytes(6).toString("hex")}`;
  try {
    await writeFile(temp, token, { flag: "wx" });
  } catch (err) {
    // A full disk fails the write after the file was created: it must not stay in the store.
    await unlink(temp).catch(() => undefined);
    throw err;
  }
  try {
    await link(temp, lockPath);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "EEXIST") return false;
    throw err;
  } finally {
    await unlink(temp).catch(() => undefined);
  }
}

/**
 * A lock file guards the tiny compare-and-rename section of a conditional
 * write. A lock left by a killed process is taken over when its owner is
 * gone or it is older than any critical section can be.
 */
export async function withFileLock<T>(lockPath: string, fn: () => Promise<T>): Promise<T> {
  const token = `${process.pid}:${Date.now()}:${randomBytes(6).toString("hex")}`;
  const started = Date.now();
  for (let attempt = 0; ; attempt++) {
    if (await tryCreateLock(lockPath, token)) break;
    await breakIfStale(lockPath);
    if (Date.now() - started > GIVE_UP_AFTER_MS) {
      throw new RelcastError("E_STORE", `timed out waiting for lock ${lockPath}`, "another relcast process holds it; if none runs, delete the lock file");
    }
    await new Promise((r) => setTimeout(r, Math.min(50, 2 + attempt) + Math.random() * 10));
  }
  try {
    return await fn();
  } finally {
    const current = await readFile(lockPath, "utf8").catch(() => "");
    if (current === token) await unlink(lockPath).catch(() => undefined);
  }
}

async function breakIfStale(lockPath: string): Promise<void> {
  const content = await readFile(lockPath, "utf8").catch(() => undefined);
  if (content === undefined) return;
  const m = /^(\d+):(\d+):/.exec(content);
  // A token we cannot read (an older relcast's lock, a damaged file) is judged by the file's age alone.
  const since = m ? Number(m[2]) : (await stat(lockPath).catch(() => undefined))?.mtimeMs;
  if (since === undefined) return;
  const stale = (m !== null && !processAlive(Number(m[1]))) || Date.now() - since >= STALE_AFTER_MS;
  if (!stale) return;
  // Re-read just before removing so a lock taken over meanwhile is left alone.
  const again = await readFile(lockPath, "utf8").catch(() => undefined);
  if (again === content) await unlink(lockPath).catch(() => undefined);
}
