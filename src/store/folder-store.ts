import { constants, unlinkSync } from "node:fs";
import { access, copyFile, link, lstat, mkdir, readdir, readlink, rename, stat, unlink, writeFile } from "node:fs/promises";
import type { Dirent } from "node:fs";
import path from "node:path";
import { randomBytes } from "node:crypto";
import { PreconditionFailedError, RelcastError } from "../core/errors.js";
import { withFileLock } from "./folder-lock.js";
import { undecodableNamesBelow } from "./undecodable-names.js";
import { assertSafeKey, FOLDER_STORE_INTERNAL } from "./object-key.js";
import { folderMeta } from "./folder-meta.js";
import { copyObjectInto } from "./folder-copy.js";
import { linkOrCopy } from "./link-or-copy.js";
import { blockedFolder, foldersAreReal, makeFoldersNoFollow, openNoFollow, statNoFollow } from "./no-follow.js";
import type { ByteRange, CopySourceMeta, ObjectMeta, ObjectStore, PutBody, PutOptions, StoreLocation } from "./object-store.js";

/**
 * A local folder laid out exactly like the bucket. Writes go to a temp file
 * first and appear atomically: create-once by link() (fails if the name
 * exists), replace by rename() under a lock after comparing the ETag. A
 * reader therefore never sees a half-written object. No path inside the
 * store is followed through a symbolic link (see no-follow.ts).
 */
export function createFolderStore(root: string): ObjectStore {
  const absRoot = path.resolve(root);
  const location: StoreLocation = { scheme: "file", bucket: absRoot, prefix: "" };
  const partsOf = (key: string) => assertSafeKey(key).split("/");
  const fileFor = (key: string) => path.join(absRoot, ...partsOf(key));
  const uriFor = (key: string) => `file://${absRoot}/${assertSafeKey(key)}`;

  /** Temp files this process is writing: an interrupted run removes them at once. */
  const inFlight = new Set<string>();

  /** Copies a local file (or, with `fromKey`, a store object opened without following links) into a new temp file. */
  async function writeTemp(key: string, body: PutBody, fromKey?: string, pin?: CopySourceMeta): Promise<string> {
    await mkdir(absRoot, { recursive: true });
    await makeFoldersNoFollow(absRoot, partsOf(key));
    const temp = path.join(path.dirname(fileFor(key)), `.relcast-tmp-${process.pid}-${randomBytes(6).toString("hex")}`);
    inFlight.add(temp);
    if (fromKey !== undefined) {
      try {
        await copyObjectInto({ root: absRoot, fromKey, fromParts: partsOf(fromKey), fromPath: fileFor(fromKey), toKey: key, uriFor }, temp, pin);
      } catch (err) {
        inFlight.delete(temp);
        throw err;
      }
      return temp;
    }
    try {
      if (typeof body === "object" && !Buffer.isBuffer(body)) {
        if (body.handOver) await linkOrCopy(body.file, temp);
        // A reflink where the file system has them, else libuv's in-kernel copy (copy_file_range).
        else await copyFile(body.file, temp, constants.COPYFILE_EXCL | constants.COPYFILE_FICLONE);
      } else await writeFile(temp, body, { flag: "wx" });
    } catch (err) {
      // A full disk fails the write after the temp file was made: it must not stay in the store.
      await unlink(temp).catch(() => undefined);
      throw err;
    }
    return temp;
  }

  async function put(key: string, body: PutBody, options: PutOptions, fromKey?: string, pin?: CopySourceMeta): Promise<{ etag: string }> {
    const file = fileFor(key);
    const temp = await writeTemp(key, body, fromKey, pin);
    // link() and rename() keep the inode and mtime, so the temp file's stat is the
    // object's ETag; stat-ing the key afterwards would race with a concurrent delete.
    const written = await stat(temp);
    try {
      if (options.ifNoneMatch === "*") {
        try {
          await link(temp, file);
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code === "EEXIST") throw new PreconditionFailedError(key, "if-none-match");
          throw err;
        }
        await unlink(temp);
      } else {
        await withFileLock(path.join(path.dirname(file), `.relcast-lock-${path.basename(file)}`), async () => {
          if (options.ifMatch !== undefined) {
            const current = await statNoFollow(absRoot, partsOf(key));
            if (!current || folderMeta(key, current).etag !== options.ifMatch) throw new PreconditionFailedError(key, "if-match");
          }
          await rename(temp, file);
        });
        // rename() between two links of one inode does nothing and keeps the temp name: drop it.
        await unlink(temp).catch((err: NodeJS.ErrnoException) => {
          if (err.code !== "ENOENT") throw err;
        });
      }
    } catch (err) {
      await unlink(temp).catch(() => undefined);
      // A folder where the object belongs (rename onto a directory): a store problem to name, not a crash.
      const code = (err as NodeJS.ErrnoException).code;
      if (code === "EISDIR" || code === "ENOTEMPTY") {
        throw new RelcastError("E_STORE", `${file} is a folder, where the object ${key} belongs`, `remove that folder (it is not relcast's: look at what is inside first), then run the command again`);
      }
      throw err;
    } finally {
      inFlight.delete(temp);
    }
    return { etag: folderMeta(key, written).etag };
  }

  return {
    location,
    uriFor,
    async head(key) {
      const st = await statNoFollow(absRoot, partsOf(key));
      return st ? folderMeta(key, st) : undefined;
    },
    async get(key) {
      // Read through one descriptor so body and ETag describe the same file.
      const opened = await openNoFollow(absRoot, partsOf(key));
      if (!opened) return undefined;
      try {
        const body = await opened.fh.readFile();
        return { body, meta: folderMeta(key, opened.st) };
      } finally {
        await opened.fh.close();
      }
    },
    async getStream(key: string, range?: ByteRange) {
      // One descriptor for bytes and ETag: a concurrent replace cannot pair old meta with new bytes.
      const opened = await openNoFollow(absRoot, partsOf(key));
      if (!opened) return undefined;
      const stream = opened.fh.createReadStream({ highWaterMark: 1 << 20, ...(range ? { start: range.start, end: range.end } : {}) });
      return { stream, meta: folderMeta(key, opened.st) };
    },
    async openRead(key: string) {
      // One descriptor, opened without following links, for the bytes and the ETag.
      const opened = await openNoFollow(absRoot, partsOf(key));
      if (!opened) return undefined;
      const { fh, st } = opened;
      // ctime moves with every write to the inode and cannot be set back by a user: equal values, same bytes.
      const sameFile = `${st.dev}:${st.ino}:${st.size}:${st.mtimeMs}:${st.ctimeMs}`;
      return { meta: folderMeta(key, st), fd: fh.fd, sameFile, close: () => fh.close() };
    },
    put,
    async copy(fromKey, toKey, options, source) {
      // `source` pins the version the caller checked: any other is refused (folder-copy.ts), as on S3.
      return put(toKey, "", options, fromKey, source);
    },
    async *list(prefix) {
      const results: ObjectMeta[] = [];
      // Every key with the prefix lies under the prefix's last folder: start there, not at the root.
      await walk(absRoot, prefix.slice(0, prefix.lastIndexOf("/") + 1), prefix, results);
      results.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
      yield* results;
    },
    async hiddenFiles(prefix) {
      const results: ObjectMeta[] = [];
      await walk(absRoot, prefix.slice(0, prefix.lastIndexOf("/") + 1), prefix, results, true);
      return results.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
    },
    async writeBlocked(key) {
      const parts = partsOf(key);
      const blocked = await blockedFolder(absRoot, parts.slice(0, -1));
      if (blocked !== undefined) return `${path.join(absRoot, blocked)} in the folder store is a symbolic link or not a folder; relcast never writes through links: remove it from the store (relcast verify lists every link in a store) and run again`;
      const st = await lstat(fileFor(key)).catch(() => undefined);
      return st?.isDirectory() ? `${fileFor(key)} is a folder, where the object ${key} belongs: remove that folder (it is not relcast's: look at what is inside first), then run the command again` : undefined;
    },
    async delete(key) {
      // unlink() never follows the last component; the folders on the way must be real ones.
      if (!(await foldersAreReal(absRoot, partsOf(key)))) return;
      await unlink(fileFor(key)).catch((err: NodeJS.ErrnoException) => {
        if (err.code !== "ENOENT") throw err;
      });
    },
    async sweepIncomplete(olderThan) {
      const removed: string[] = [];
      await sweepInternal(absRoot, olderThan, removed);
      return removed;
    },
    async abortInFlight() {
      // Synchronous on purpose: nothing else of the interrupted run gets to write in between.
      const removed: string[] = [];
      for (const temp of inFlight) {
        try {
          unlinkSync(temp);
          removed.push(`removed the temp file ${temp}`);
        } catch {
          // already linked into place or removed
        }
      }
      inFlight.clear();
      return removed;
    },
    undecodableNames: () => undecodableNamesBelow(absRoot),
    async strayEntries(folders) {
      const found: string[] = [];
      if (!folders) await findStray(absRoot, "", found, true);
      for (const folder of folders ?? []) {
        const blocked = await blockedFolder(absRoot, folder.split("/").filter(Boolean));
        if (blocked !== undefined) found.push(`${blocked}/ is a symbolic link or a file where relcast keeps a folder; the folder store never follows links: remove it`);
        else await findStray(absRoot, folder, found, false);
      }
      // Sorted once, here: not every listing (a publish checks the 20,000 names of a 10,000-release downloads/).
      return found.sort();
    },
    async checkReachable() {
      // Checks without creating anything (a dry run leaves no trace): the folder, or the
      // nearest folder above it that exists, must be a directory this process may write to.
      try {
        await writableFolderOrAncestor(absRoot);
      } catch (err) {
        throw new RelcastError(
          "E_STORE",
          `folder store ${absRoot} is not writable (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`,
          "pass --store file://<a folder you can write to>",
        );
      }
    },
  };
}

async function writableFolderOrAncestor(folder: string): Promise<void> {
  let dir = folder;
  for (;;) {
    const info = await stat(dir).catch((err: NodeJS.ErrnoException) => {
      if (err.code === "ENOENT") return undefined;
      throw err;
    });
    if (info) {
      if (!info.isDirectory()) throw Object.assign(new Error(`${dir} is not a folder`), { code: "ENOTDIR" });
      await access(dir, constants.W_OK | constants.X_OK);
      return;
    }
    const up = path.dirname(dir);
    if (up === dir) throw Object.assign(new Error("no existing folder above it"), { code: "ENOENT" });
    dir = up;
  }
}

/** Temp files and locks (`.relcast-*`) that a killed run left behind. */
async function sweepInternal(dir: string, olderThan: Date, removed: string[]): Promise<void> {
  let entries;
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch {
    return;
  }
  for (const entry of entries) {
    const abs = path.join(dir, entry.name);
    if (entry.isDirectory()) await sweepInternal(abs, olderThan, removed);
    else if (entry.name.startsWith(".relcast-")) {
      const st = await lstat(abs).catch(() => undefined);
      // A temp file that is a hard link keeps its source's mtime; its ctime is when the link was made.
      if (st && Math.max(st.mtimeMs, st.ctimeMs) < olderThan.getTime()) {
        await unlink(abs).catch(() => undefined);
        removed.push(`temp file ${abs}`);
      }
    }
  }
}

/** A folder's entries (lstat-based: links are reported, never entered); none when the folder is missing or is a file. */
async function entriesOf(dir: string): Promise<Dirent[]> {
  try {
    return await readdir(dir, { withFileTypes: true });
  } catch (err) {
    if (["ENOENT", "ENOTDIR"].includes((err as NodeJS.ErrnoException).code ?? "")) return [];
    throw err;
  }
}

/** Every symbolic link and special file below the root (readdir's Dirent does not follow links). */
async function findStray(root: string, rel: string, found: string[], recursive: boolean): Promise<void> {
  const entries = await entriesOf(path.join(root, rel));
  for (const entry of entries) {
    const key = rel + entry.name;
    if (entry.isDirectory()) {
      if (recursive) await findStray(root, `${key}/`, found, true);
    }
    else if (entry.isSymbolicLink()) {
      const target = await readlink(path.join(root, key)).catch(() => "?");
      found.push(`${key} is a symbolic link (to ${target}); the folder store never follows links, so readers see no object there: remove it`);
    } else if (!entry.isFile()) found.push(`${key} is ${specialKind(entry)}, not a regular file: a store holds only files and folders, and the folder store never opens one, so readers see no object there: remove it (rm ${path.join(root, key)})`);
  }
}

/** What a special file is, in words (a device or pipe someone made with mknod or mkfifo, or copied from /dev). */
function specialKind(entry: Dirent): string {
  if (entry.isCharacterDevice()) return "a character device";
  if (entry.isBlockDevice()) return "a block device";
  if (entry.isFIFO()) return "a named pipe (FIFO)";
  if (entry.isSocket()) return "a socket";
  return "a special file";
}

/** Objects under `prefix` into `out`; with `hidden`, the folder store's own `.relcast-*` files there instead. */
async function walk(root: string, rel: string, prefix: string, out: ObjectMeta[], hidden = false): Promise<void> {
  // Only descend into folders that can hold keys with the prefix.
  if (rel && !prefix.startsWith(rel) && !rel.startsWith(prefix)) return;
  // The starting folder is reached through real folders only; below it, links are never entered (Dirent is lstat-based).
  if (rel && !(await foldersAreReal(root, [...rel.split("/").filter(Boolean), "x"]))) return;
  const entries = await entriesOf(path.join(root, rel));
  for (const entry of entries) {
    const key = rel + entry.name;
    const internal = FOLDER_STORE_INTERNAL.test(key);
    if (entry.isDirectory()) {
      // A `.relcast-*` folder is never the store's (it makes only files so named), but a static host serves what is in it.
      if (!internal || hidden) await walk(root, key + "/", prefix, out, hidden);
    } else if (internal === hidden && entry.isFile() && key.startsWith(prefix)) {
      const st = await lstat(path.join(root, key)).catch(() => undefined);
      if (st?.isFile()) out.push(folderMeta(key, st));
    }
  }
}
