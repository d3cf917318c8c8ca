import { constants, type Stats } from "node:fs";
import { lstat, mkdir, open, type FileHandle } from "node:fs/promises";
import path from "node:path";
import { RelcastError } from "../core/errors.js";

/**
 * Path handling of the folder store that never follows a symbolic link
 * inside the store: every folder between the store root and an object must
 * be a real folder (lstat), and the object itself is opened with O_NOFOLLOW.
 * A link anywhere on the way makes the object "not found" to readers and a
 * refused write to writers, so a link planted in a store can neither be
 * served (`serve`, `site build/sync`, `verify`) nor written through
 * (`publish`, `gc`). The store root itself may be a link (macOS's /tmp is).
 *
 * Between the folder checks and the open a folder could in theory be swapped
 * for a link by someone who can already write the store; O_NOFOLLOW still
 * covers the last component. Node has no openat(), which would close that gap.
 */
const MISSING = new Set(["ENOENT", "ENOTDIR", "EISDIR", "ELOOP"]);

function isMissing(err: unknown): boolean {
  return MISSING.has((err as NodeJS.ErrnoException).code ?? "");
}

async function lstatOrUndefined(file: string): Promise<Stats | undefined> {
  try {
    return await lstat(file);
  } catch (err) {
    if (isMissing(err)) return undefined;
    throw err;
  }
}

/** True when every folder from `root` down to (not including) the last part is a real folder. */
export async function foldersAreReal(root: string, parts: readonly string[]): Promise<boolean> {
  let dir = root;
  for (const part of parts.slice(0, -1)) {
    dir = path.join(dir, part);
    const st = await lstatOrUndefined(dir);
    if (!st || !st.isDirectory()) return false;
  }
  return true;
}

/** The first folder on the way to `parts` that exists but is a link or a file ("a/b"); undefined when all are real or missing. */
export async function blockedFolder(root: string, parts: readonly string[]): Promise<string | undefined> {
  let dir = root;
  for (const [i, part] of parts.entries()) {
    dir = path.join(dir, part);
    const st = await lstatOrUndefined(dir);
    if (!st) return undefined;
    if (!st.isDirectory()) return parts.slice(0, i + 1).join("/");
  }
  return undefined;
}

/** The object's own stat when it is a regular file reached without any link; else undefined. */
export async function statNoFollow(root: string, parts: readonly string[]): Promise<Stats | undefined> {
  if (!(await foldersAreReal(root, parts))) return undefined;
  const st = await lstatOrUndefined(path.join(root, ...parts));
  return st?.isFile() ? st : undefined;
}

/**
 * Opens the object for reading without following links, with the stat of
 * that descriptor (so bytes and ETag describe the same file); undefined when
 * it is missing, a folder, or reached through a link.
 */
export async function openNoFollow(root: string, parts: readonly string[]): Promise<{ fh: FileHandle; st: Stats } | undefined> {
  if (!(await foldersAreReal(root, parts))) return undefined;
  let fh: FileHandle;
  try {
    // O_NONBLOCK: a FIFO planted in the store would block the open until a writer came; it is then refused as not a file.
    fh = await open(path.join(root, ...parts), constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (err) {
    if (isMissing(err)) return undefined;
    throw err;
  }
  const st = await fh.stat().catch(async (err: unknown) => {
    await fh.close();
    throw err;
  });
  if (!st.isFile()) {
    await fh.close();
    return undefined;
  }
  return { fh, st };
}

/**
 * Creates the folders from `root` down to the object's folder one at a time
 * and refuses (E_STORE) when one of them is a link or a file: a write never
 * lands outside the store through a planted link.
 */
export async function makeFoldersNoFollow(root: string, parts: readonly string[]): Promise<void> {
  let dir = root;
  for (const part of parts.slice(0, -1)) {
    dir = path.join(dir, part);
    await mkdir(dir).catch((err: NodeJS.ErrnoException) => {
      if (err.code !== "EEXIST") throw err;
    });
    const st = await lstat(dir);
    if (!st.isDirectory()) {
      throw new RelcastError(
        "E_STORE",
        `${dir} in the folder store is ${st.isSymbolicLink() ? "a symbolic link" : "not a folder"}; relcast never writes through links`,
        "remove it from the store (relcast verify lists every link in a store) and run again",
      );
    }
  }
}
