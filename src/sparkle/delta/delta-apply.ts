/**
 * Applies a Sparkle binary delta (major version 3), following Sparkle's
 * SUBinaryDeltaApply and SPUSparkleDeltaArchive reader: check the old tree's
 * hash, copy it, then carry out every item in order (delete, clone, patch,
 * extract, permissions) and check the result's hash. Written apart from the
 * creator: it reads only the file, never the creator's item lists.
 *
 * Reading is defensive where Sparkle's is trusting: every path must start with
 * "/" and hold no "." / ".." / empty component, no item may write below a
 * symlink, clone indexes and lengths are bounds-checked, and a failed apply
 * removes what it wrote.
 */
import { linkLeavingTree } from "../../core/inside-tree.js";
import type { Hash } from "node:crypto";
import type { Stats } from "node:fs";
import { chmod, copyFile, cp, link, lstat, mkdir, open, readdir, readFile, readlink, rename, rm, symlink, writeFile } from "node:fs/promises";
import path from "node:path";
import { RelcastError } from "../../core/errors.js";
import { applyBsdiffPatch } from "./bspatch.js";
import { type DeltaBody, openDeltaBody } from "./delta-body.js";
import { claimTooLarge, DEFAULT_DELTA_LIMITS, type DeltaLimits, MAX_LINK_TARGET_BYTES, MAX_PATH_TABLE_BYTES, maxPatchBytes, maxPatchedFileBytes } from "./delta-limits.js";
import { Command, compressionName, type CompressionName, DELTA_MAGIC, MAJOR_VERSION, S_IFDIR, S_IFLNK, S_IFMT, S_IFREG } from "./delta-format.js";
import { linkTargetProblem } from "../../core/link-target-rule.js";
import { type HashedTree, hashTree, inodeHashes, lstatOrUndefined, PERMISSION_FLAGS } from "./tree-hash.js";

export interface DeltaHeader {
  compression: CompressionName;
  compressionLevel: number;
  fileSystemCompression: boolean;
  majorVersion: number;
  minorVersion: number;
  beforeHash: string;
  afterHash: string;
}

export interface DeltaItem {
  rel: string;
  commands: number;
  mode: number;
  clonedFrom?: string;
  dataLength: number;
}

export function corrupt(file: string, why: string): RelcastError {
  return new RelcastError("E_VERIFY", `${file} is not a valid Sparkle delta: ${why}.`, "Recreate the delta with `relcast delta create`.");
}

export interface OpenedDelta {
  header: DeltaHeader;
  items: DeltaItem[];
  reader: DeltaBody;
  close(): Promise<void>;
}

async function u64(reader: DeltaBody, file: string, what: string): Promise<number> {
  const v = (await reader.bytes(8)).readBigUInt64LE(0);
  if (v > BigInt(Number.MAX_SAFE_INTEGER)) throw claimTooLarge(file, what, v, Number.MAX_SAFE_INTEGER, "any length can be");
  return Number(v);
}

/** Every size the items claim, checked against the limits before any of it is read; returns their sum. */
function checkClaims(file: string, items: readonly DeltaItem[], limits: DeltaLimits): number {
  const basis = limits.basis ?? "relcast reads from any delta";
  let total = 0;
  for (const item of items) {
    const c = item.commands;
    if (c & Command.binaryDiff) {
      if (item.dataLength > maxPatchBytes(limits)) throw claimTooLarge(file, `the patch for ${item.rel}`, item.dataLength, maxPatchBytes(limits), `a patch to a file of at most ${maxPatchedFileBytes(limits)} bytes (${basis}; relcast patches files up to 1 GiB, larger ones are shipped whole) can need`);
    } else if (c & Command.extract && (item.mode & S_IFMT) === S_IFREG) {
      if (item.dataLength > limits.maxFileBytes) throw claimTooLarge(file, `the file ${item.rel}`, item.dataLength, limits.maxFileBytes, `bytes ${basis} for one file`);
    } else if (item.dataLength > MAX_LINK_TARGET_BYTES) {
      throw claimTooLarge(file, `the link ${item.rel}`, item.dataLength, MAX_LINK_TARGET_BYTES, "bytes a link target may have");
    }
    total += item.dataLength;
  }
  if (total > limits.maxDataBytes) throw claimTooLarge(file, "its items' data", total, limits.maxDataBytes, `bytes ${basis} in all`);
  return total;
}

function checkRelativePath(file: string, rel: string): void {
  const parts = rel.split("/");
  if (!rel.startsWith("/") || rel.length < 2 || parts.slice(1).some((p) => p === "" || p === "." || p === "..") || rel.includes("\\")) {
    throw corrupt(file, `unsafe path ${JSON.stringify(rel)}`);
  }
}

/**
 * Reads the header and item list and checks every size they claim; the body
 * stays open for the data, which is decompressed only as far as the items
 * claim (see delta-limits.ts).
 */
export async function openDelta(deltaFile: string, limits: DeltaLimits = DEFAULT_DELTA_LIMITS): Promise<OpenedDelta> {
  const raw = await open(deltaFile, "r");
  const head = Buffer.alloc(6);
  try {
    const { bytesRead } = await raw.read(head, 0, 6, 0);
    if (bytesRead < 6 || head.toString("latin1", 0, 4) !== DELTA_MAGIC) throw corrupt(deltaFile, `it does not start with "${DELTA_MAGIC}"`);
  } finally {
    await raw.close();
  }
  const compression = compressionName(head[4]!);
  if (!compression) throw corrupt(deltaFile, `compression ${head[4]} is not one relcast reads (lzma, zlib, bzip2, none)`);
  // Until the items are read, the read-ahead is what bounds decompression; then their claimed sizes do.
  const reader = await openDeltaBody(deltaFile, compression, 52 + MAX_PATH_TABLE_BYTES * 9 + limits.maxDataBytes);
  try {
    const majorVersion = (await reader.bytes(2)).readUInt16LE(0);
    const minorVersion = (await reader.bytes(2)).readUInt16LE(0);
    if (majorVersion !== MAJOR_VERSION) throw corrupt(deltaFile, `major version ${majorVersion}; relcast reads version ${MAJOR_VERSION} (Sparkle 2's format)`);
    const beforeHash = (await reader.bytes(20)).toString("hex");
    const afterHash = (await reader.bytes(20)).toString("hex");
    const header: DeltaHeader = { compression, compressionLevel: head[5]! & 0x0f, fileSystemCompression: (head[5]! & 0x80) !== 0, majorVersion, minorVersion, beforeHash, afterHash };

    const tableLength = await u64(reader, deltaFile, "its path table");
    if (tableLength > MAX_PATH_TABLE_BYTES) throw claimTooLarge(deltaFile, "its path table", tableLength, MAX_PATH_TABLE_BYTES, "bytes a path table may have");
    const paths = tableLength === 0 ? [] : (await reader.bytes(tableLength)).toString("utf8").split("\0");
    if (paths.length > 0 && paths.pop() !== "") throw corrupt(deltaFile, "the path table does not end with NUL");
    for (const p of paths) checkRelativePath(deltaFile, p);
    const u8 = async () => (await reader.bytes(1))[0]!;
    const u16 = async () => (await reader.bytes(2)).readUInt16LE(0);
    const u32 = async () => (await reader.bytes(4)).readUInt32LE(0);
    const items: DeltaItem[] = [];
    if (paths.length > 0) {
      for (;;) {
        const commands = await u8();
        if (commands === Command.end) break;
        if (commands & ~0x1f) throw corrupt(deltaFile, `unknown command bits 0x${commands.toString(16)}`);
        if (items.length >= paths.length) throw corrupt(deltaFile, "more items than paths");
        const rel = paths[items.length]!;
        let mode = 0;
        let dataLength = 0;
        let clonedFrom: string | undefined;
        if (commands & Command.clone) {
          if (commands & Command.modifyPermissions) mode = await u16();
          const index = await u32();
          if (index >= paths.length) throw corrupt(deltaFile, `clone index ${index} is past the ${paths.length} paths`);
          clonedFrom = paths[index];
          if (commands & Command.binaryDiff) dataLength = await u64(reader, deltaFile, `the patch for ${rel}`);
        } else if (commands & Command.binaryDiff) {
          if (commands & Command.modifyPermissions) mode = await u16();
          dataLength = await u64(reader, deltaFile, `the patch for ${rel}`);
        } else if (commands & Command.extract) {
          mode = await u16();
          const type = mode & S_IFMT;
          if (type === S_IFREG) dataLength = await u64(reader, deltaFile, `the file ${rel}`);
          else if (type === S_IFLNK) dataLength = await u16();
          else if (type !== S_IFDIR) throw corrupt(deltaFile, `extract item ${rel} has file type 0${type.toString(8)}`);
        } else if (commands & Command.modifyPermissions) {
          mode = await u16();
        }
        items.push({ rel, commands, mode, clonedFrom, dataLength });
      }
    } else if (!(await reader.atEnd()) && (await reader.bytes(1))[0] !== Command.end) {
      // Sparkle reads no commands after an empty path table; relcast's creator still writes the end marker.
      throw corrupt(deltaFile, "data follows an empty path table");
    }
    reader.setLimit(reader.position + checkClaims(deltaFile, items, limits));
    return { header, items, reader, close: () => reader.close() };
  } catch (err) {
    await reader.close();
    throw err;
  }
}

/** A link the delta creates must point inside the tree (link-target-rule.ts). */
export function checkLinkTarget(file: string, rel: string, target: string | Buffer): void {
  const problem = linkTargetProblem(rel, target);
  if (problem) throw corrupt(file, problem);
}

/** No component between `root` and the item may be a symlink (Sparkle checks the parent; we check all). */
async function refuseLinkedParents(root: string, rel: string, deltaFile: string): Promise<void> {
  const parts = rel.split("/").slice(1, -1);
  let at = root;
  for (const part of parts) {
    at = path.join(at, part);
    const st = await lstatOrUndefined(at);
    if (!st) return;
    if (st.isSymbolicLink()) throw corrupt(deltaFile, `${rel} would be written through the symlink ${path.relative(root, at)}`);
  }
}

/** Copies the old tree as Sparkle does, or (linkFiles) hard-links its files: the applier never writes into an existing file, it replaces it. */
async function copyTree(from: string, to: string, linkFiles: boolean): Promise<void> {
  if (!linkFiles) {
    await cp(from, to, { recursive: true, verbatimSymlinks: true, preserveTimestamps: false, errorOnExist: true, force: false });
    return;
  }
  const st = await lstat(from);
  await mkdir(to, { mode: 0o700 });
  for (const name of await readdir(from)) {
    const a = path.join(from, name);
    const b = path.join(to, name);
    const s = await lstat(a);
    if (s.isDirectory()) await copyTree(a, b, true);
    else if (s.isSymbolicLink()) await symlink(await readlink(a, { encoding: "buffer" }), b);
    else if (s.isFile()) await link(a, b);
  }
  await chmod(to, st.mode & PERMISSION_FLAGS);
}

/** Gives `file` its own inode before its mode changes, so a hard-linked old tree stays as it was. */
async function detach(file: string, st: Stats): Promise<void> {
  if (!st.isFile() || st.nlink < 2) return;
  const copy = `${file}.relcast-detach`;
  await copyFile(file, copy);
  await rename(copy, file);
}

export interface ApplyResult {
  header: DeltaHeader;
  items: number;
}

/**
 * Applies `deltaFile` to the bundle folder `oldRoot`, writing the new bundle to
 * `outRoot` (which must not exist). On any failure `outRoot` is removed.
 */
export interface ApplyOptions {
  /**
   * The old tree as the caller already hashed it (publish and verify, right
   * after unpacking it): its hash is the before-hash, and the output is made
   * of hard links to its files, so unchanged files are neither copied nor
   * read again for the after-hash.
   */
  oldTree?: HashedTree;
  /** What the delta may claim; the new tree's sizes when the caller knows them (default: DEFAULT_DELTA_LIMITS). */
  limits?: DeltaLimits;
}

/** File system errors an item's own paths cause (a disk that is full or unwritable stays what it is). */
const ITEM_FS_ERRORS = new Set(["ENOENT", "EEXIST", "ENOTDIR", "EISDIR", "ENOTEMPTY", "ELOOP", "ENAMETOOLONG"]);

export async function applyDelta(oldRoot: string, outRoot: string, deltaFile: string, options: ApplyOptions = {}): Promise<ApplyResult> {
  if (await lstatOrUndefined(outRoot)) throw new RelcastError("E_INPUT", `${outRoot} already exists.`, "Name a new folder for the patched bundle.");
  let opened: OpenedDelta | undefined;
  let wrote = false;
  try {
    const limits = options.limits ?? DEFAULT_DELTA_LIMITS;
    opened = await openDelta(deltaFile, limits);
    const { header, items, reader } = opened;
    const before = (options.oldTree ?? (await hashTree(oldRoot))).hash.toString("hex");
    if (before !== header.beforeHash) {
      throw new RelcastError("E_VERIFY", `${oldRoot} is not the bundle this delta was made from (tree hash ${before}, delta expects ${header.beforeHash}).`, "Apply the delta to the release named in its file name.");
    }
    wrote = true;
    await mkdir(path.dirname(path.resolve(outRoot)), { recursive: true });
    await copyTree(oldRoot, outRoot, options.oldTree !== undefined);

    for (const item of items) {
      await applyItem(item).catch((err: unknown) => {
        // A file system error here is the delta's doing (a folder where a file goes, a missing parent): name the item.
        if (err instanceof RelcastError || !ITEM_FS_ERRORS.has((err as NodeJS.ErrnoException).code ?? "")) throw err;
        throw corrupt(deltaFile, `item ${item.rel} cannot be carried out (${(err as NodeJS.ErrnoException).code})`);
      });
    }
    await reader.expectEnd();

    async function applyItem(item: DeltaItem): Promise<void> {
      const dest = path.join(outRoot, item.rel);
      const src = path.join(oldRoot, item.rel);
      await refuseLinkedParents(outRoot, item.rel, deltaFile);
      const c = item.commands;
      if (c & Command.delete) await rm(dest, { recursive: true, force: true });

      if (c & Command.clone && !(c & Command.binaryDiff)) {
        const from = path.join(oldRoot, item.clonedFrom!);
        await refuseLinkedParents(oldRoot, item.clonedFrom!, deltaFile);
        if (!(await lstatOrUndefined(from))?.isFile()) throw corrupt(deltaFile, `clone source ${item.clonedFrom} is not a file in the old bundle`);
        await rm(dest, { recursive: true, force: true });
        await copyFile(from, dest);
        await chmod(dest, (await lstat(from)).mode & PERMISSION_FLAGS);
      } else if (c & Command.binaryDiff) {
        const patch = await reader.bytes(item.dataLength);
        const fromRel = c & Command.clone ? item.clonedFrom! : item.rel;
        await refuseLinkedParents(oldRoot, fromRel, deltaFile);
        const from = path.join(oldRoot, fromRel);
        const fromStat = await lstatOrUndefined(from);
        if (!fromStat?.isFile()) throw corrupt(deltaFile, `patch source ${fromRel} is not a file in the old bundle`);
        const result = applyBsdiffPatch(await readFile(from), patch, maxPatchedFileBytes(limits));
        const existing = await lstatOrUndefined(dest);
        // bspatch rewrites the file in place, keeping its mode; clones take the source's mode.
        const keepMode = c & Command.clone || !existing?.isFile() ? fromStat.mode & PERMISSION_FLAGS : existing.mode & PERMISSION_FLAGS;
        if (existing) await rm(dest, { recursive: true, force: true });
        await writeFile(dest, result, { mode: 0o600, flag: "wx" });
        await chmod(dest, keepMode);
      } else if (c & Command.extract) {
        const type = item.mode & S_IFMT;
        if (type === S_IFREG) {
          await rm(dest, { recursive: true, force: true });
          const fh = await open(dest, "wx", 0o600);
          try {
            await reader.copyTo(fh, item.dataLength);
          } finally {
            await fh.close();
          }
          await chmod(dest, item.mode & PERMISSION_FLAGS);
        } else if (type === S_IFLNK) {
          // As bytes: a target that is not UTF-8 is refused by the rule, never decoded into another link.
          const target = await reader.bytes(item.dataLength);
          checkLinkTarget(deltaFile, item.rel, target);
          await rm(dest, { recursive: true, force: true });
          await symlink(target, dest);
        } else {
          await mkdir(dest, { mode: 0o700 });
          await chmod(dest, item.mode & PERMISSION_FLAGS);
        }
      }

      if (c & Command.modifyPermissions) {
        const st = await lstatOrUndefined(dest);
        if (!st) throw corrupt(deltaFile, `permissions for ${item.rel}, which does not exist`);
        // Linux has no lchmod; Sparkle hashes every symlink as 0755 anyway.
        await detach(dest, st);
        if (!st.isSymbolicLink()) await chmod(dest, (st.mode & ~PERMISSION_FLAGS & 0o7777) | (item.mode & PERMISSION_FLAGS));
      }
    }

    // A link the delta made can be harmless alone and leave the tree through another (`esc -> up/..` beside
    // `up -> ..`): every link of the result is resolved as the kernel would, through every link on the way.
    const escaping = await linkLeavingTree(outRoot);
    if (escaping) throw corrupt(deltaFile, `link /${escaping.rel} in the result ${escaping.why}`);
    const after = (await hashTree(outRoot, options.oldTree ? { knownInodes: inodeHashes(options.oldTree) } : {})).hash.toString("hex");
    if (after !== header.afterHash) {
      throw new RelcastError("E_VERIFY", `Applying ${path.basename(deltaFile)} gave tree hash ${after}, not the ${header.afterHash} it promises.`, "Recreate the delta; do not publish this one.");
    }
    return { header, items: items.length };
  } catch (err) {
    if (wrote) await rm(outRoot, { recursive: true, force: true });
    throw err;
  } finally {
    await opened?.close();
  }
}

/** Header and items only, for `relcast delta info`: the data is never decompressed, but every size it claims is checked. */
export async function readDeltaInfo(deltaFile: string, limits: DeltaLimits = DEFAULT_DELTA_LIMITS): Promise<{ header: DeltaHeader; items: DeltaItem[] }> {
  const opened = await openDelta(deltaFile, limits);
  await opened.close();
  return { header: opened.header, items: opened.items };
}
