import { constants, type Stats } from "node:fs";
import { open, unlink } from "node:fs/promises";
import { pipeline } from "node:stream/promises";
import { SourceChangedError } from "../core/errors.js";
import { folderMeta } from "./folder-meta.js";
import { linkOpened } from "./link-or-copy.js";
import { openNoFollow } from "./no-follow.js";
import type { CopySourceMeta } from "./object-store.js";

/** Where a folder store copy reads and writes: `fromPath` is `fromParts` below `root`; `describe` names keys in errors. */
export interface FolderCopy {
  root: string;
  fromKey: string;
  fromParts: readonly string[];
  fromPath: string;
  toKey: string;
  uriFor(key: string): string;
}

/**
 * Refuses a source that is not the version the caller pinned. The folder
 * ETag (folderMeta) changes with every put (new inode) and with a write in
 * place (mtime, size), so a source replaced after the caller hashed it, by
 * any bytes of any size, is never copied: the same promise as S3's
 * `x-amz-copy-source-if-match`.
 */
function checkPin(c: FolderCopy, st: Stats, pin: CopySourceMeta | undefined, when: string): void {
  if (!pin) return;
  const now = folderMeta(c.fromKey, st);
  if (now.etag === pin.etag && now.size === pin.size) return;
  throw new SourceChangedError(c.uriFor(c.fromKey), c.uriFor(c.toKey), `the source was replaced ${when} (ETag ${pin.etag}, ${pin.size} bytes when it was checked; ${now.etag}, ${now.size} bytes now)`);
}

/**
 * Fills the new file `temp` with the source object, opened once without
 * following links: a hard link to that very inode where the file system
 * allows (objects are never changed in place), else a copy of its bytes.
 * With a pin, the opened descriptor is checked before and after, and a
 * source that differs leaves no temp file and throws SourceChangedError.
 */
export async function copyObjectInto(c: FolderCopy, temp: string, pin: CopySourceMeta | undefined): Promise<void> {
  const opened = await openNoFollow(c.root, c.fromParts);
  if (!opened) {
    if (pin) throw new SourceChangedError(c.uriFor(c.fromKey), c.uriFor(c.toKey), "the source was removed (or made a link) after it was checked");
    throw Object.assign(new Error(`no object ${c.fromKey} to copy (missing or a link)`), { code: "ENOENT" });
  }
  const source = opened.fh;
  let made = false;
  try {
    checkPin(c, opened.st, pin, "before the copy began");
    if (!(await linkOpened(c.fromPath, opened.st, temp))) {
      const target = await open(temp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, 0o644);
      made = true;
      try {
        await pipeline(source.createReadStream({ highWaterMark: 1 << 20, autoClose: false }), target.createWriteStream());
      } finally {
        await target.close().catch(() => undefined);
      }
    } else made = true;
    // The same descriptor again: a write in place while the bytes were linked or copied changes its size or mtime.
    checkPin(c, await source.stat(), pin, "while it was copied");
  } catch (err) {
    if (made) await unlink(temp).catch(() => undefined);
    throw err;
  } finally {
    await source.close().catch(() => undefined);
  }
}
