import { constants } from "node:fs";
import { copyFile, link, lstat, unlink } from "node:fs/promises";

/** Errors after which a hard link is impossible here but a copy is fine (another file system, no links, too many links). */
const NO_LINK = new Set(["EXDEV", "EPERM", "EMLINK", "ENOTSUP", "EOPNOTSUPP", "ENOSYS"]);

/**
 * Makes `temp` hold the bytes of `source` as cheaply as the file system
 * allows: a hard link (no bytes copied), else a reflink or in-kernel copy
 * (copy_file_range). Safe for store objects because nothing is ever written
 * in place: every put makes a new temp file and renames or links it over the
 * key, so replacing or deleting one name never changes another. `source`
 * must be a regular file: a link to a symlink is refused (the folder store
 * never follows links), checked on the inode the new name really got.
 * Returns how the bytes got there.
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
