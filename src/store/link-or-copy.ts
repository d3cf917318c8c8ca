import { constants, type Stats } from "node:fs";
import { copyFile, link, lstat, unlink } from "node:fs/promises";

/** Errors after which a hard link is impossible here but a copy is fine (another file system, no links, too many links). */
const NO_LINK = new Set(["EXDEV", "EPERM", "EMLINK", "ENOTSUP", "EOPNOTSUPP", "ENOSYS"]);

/**
 * Hard links are safe for store objects because nothing is ever written in
 * place: every put makes a new temp file and renames or links it over the
 * key, so replacing or deleting one name never changes another.
 *
 * Links `temp` to the file already opened through `sourcePath` (`opened` is
 * that descriptor's stat), and keeps the link only if it is that very inode: a path swapped for a
 * symlink in between is never linked (the folder store follows no links).
 * Returns false where the file system cannot link (the caller copies).
 */
export async function linkOpened(sourcePath: string, opened: Stats, temp: string): Promise<boolean> {
  try {
    await link(sourcePath, temp);
  } catch (err) {
    if (NO_LINK.has((err as NodeJS.ErrnoException).code ?? "")) return false;
    throw err;
  }
  const made = await lstat(temp);
  if (made.isFile() && made.ino === opened.ino && made.dev === opened.dev) return true;
  await unlink(temp);
  return false;
}

/**
 * Makes `temp` hold a local regular file handed over by its owner (never a
 * symlink): a hard link where the file system allows, else a reflink or
 * in-kernel copy (copy_file_range). Returns how the bytes got there.
 */
export async function linkOrCopy(source: string, temp: string): Promise<"link" | "copy"> {
  const before = await lstat(source);
  if (!before.isFile()) throw Object.assign(new Error(`${source} is not a regular file`), { code: "ENOENT" });
  try {
    await link(source, temp);
    const made = await lstat(temp);
    if (made.isFile() && made.ino === before.ino && made.dev === before.dev) return "link";
    await unlink(temp);
    throw Object.assign(new Error(`${source} changed while it was linked`), { code: "ENOENT" });
  } catch (err) {
    if (!NO_LINK.has((err as NodeJS.ErrnoException).code ?? "")) throw err;
  }
  // COPYFILE_FICLONE: a reflink where the file system has them, else libuv's in-kernel copy.
  await copyFile(source, temp, constants.COPYFILE_EXCL | constants.COPYFILE_FICLONE);
  return "copy";
}
