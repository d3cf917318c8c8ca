import { constants } from "node:fs";
import { copyFile } from "node:fs/promises";
import path from "node:path";
import { RelcastError } from "../../core/errors.js";
import { digestFile } from "../../core/file-digest.js";
import type { LocalArtifact } from "../../domain/build-record.js";

/**
 * Copies the disk image into the run's work folder (a reflink where the file
 * system has them, else an in-kernel copy) and hashes the copy. The release
 * then publishes exactly the bytes it hashed, even if the build output
 * changes while it runs, and a folder store on the same file system takes
 * the copy as a hard link instead of copying it again.
 */
export async function snapshotDiskImage(dmgFile: string, workDir: string, signal?: AbortSignal): Promise<LocalArtifact> {
  const file = path.join(workDir, "disk-image.dmg");
  try {
    await copyFile(dmgFile, file, constants.COPYFILE_EXCL | constants.COPYFILE_FICLONE);
  } catch (err) {
    throw new RelcastError("E_INPUT", `could not copy the disk image ${dmgFile} into the work folder ${workDir}: ${(err as Error).message}`, "check that the disk image is readable and that the temp folder (TMPDIR) has room for a copy of it");
  }
  return { file, ...(await digestFile(file, signal)) };
}
