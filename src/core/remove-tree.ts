/**
 * Removes a scratch folder that holds an unpacked bundle. A bundle may carry
 * read-only folders (mode 0555 in a zip from elsewhere, kept as unpacked);
 * a user other than root cannot delete what is inside them, so on EACCES or
 * EPERM every folder is given back its owner's rwx (links are not followed:
 * lstat, and only real folders are changed) and the removal is retried.
 */
import { chmod, lstat, readdir, rm } from "node:fs/promises";
import path from "node:path";

async function ownerMayWrite(dir: string): Promise<void> {
  const st = await lstat(dir).catch(() => undefined);
  if (!st?.isDirectory()) return;
  if ((st.mode & 0o700) !== 0o700) await chmod(dir, (st.mode & 0o7777) | 0o700);
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    if (entry.isDirectory()) await ownerMayWrite(path.join(dir, entry.name));
  }
}

export async function removeTree(dir: string): Promise<void> {
  try {
    await rm(dir, { recursive: true, force: true });
    return;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code !== "EACCES" && code !== "EPERM") throw err;
  }
  await ownerMayWrite(dir);
  await rm(dir, { recursive: true, force: true });
}
