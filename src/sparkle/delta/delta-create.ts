/**
 * Creates a Sparkle binary delta (major version 3) between two bundle folders,
 * choosing items the way Sparkle's SUBinaryDeltaCreate does:
 * - removed entries become delete items;
 * - unchanged entries are left out; a permission change alone is a
 *   modify-permissions item (symlinks only ever carry 0755);
 * - a changed regular file of at least 4 KiB whose old and new sizes are both
 *   within `diffLimitBytes` becomes a bsdiff item (plus new permissions);
 * - any other new or changed entry is extracted whole (with a delete first when
 *   its type changed, e.g. a file that became a folder); before that, a file
 *   over 4 KiB identical to some old file is cloned from it, and a file over
 *   16 KiB that moved (same name left the old tree, sizes within 60%, or a
 *   framework's Versions/A → Versions/B) is cloned and diffed;
 * - items are ordered case-insensitively with old paths first, diffs last.
 * The payload is written to a scratch file and compressed into `outFile`.
 */
import { randomUUID } from "node:crypto";
import { lstat, mkdtemp, open, rename, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { RelcastError } from "../../core/errors.js";
import { linkLeavingTree } from "../../core/inside-tree.js";
import { createBsdiffPatchParts } from "./bsdiff-create.js";
import { compressFile } from "./delta-codec.js";
import { BlockJudge, type PayloadRange, storeMinFileBytes } from "./incompressible.js";
import { MAX_DIFF_FILE_BYTES } from "./delta-limits.js";
import { COMPRESSION_LEVEL, Command, Compression, type CompressionName, DELTA_MAGIC, MAJOR_VERSION, MINOR_VERSION, S_IFMT } from "./delta-format.js";
import { inFtsOrder } from "./fts-sorted.js";
import { linkTargetProblem } from "../../core/link-target-rule.js";
import { indexOfRel } from "./tree-table-hashes.js";
import { type ContentHashes, CUSTOM_ICON_PATH, ftsOrder, type HashedTree, hashTree, PERMISSION_FLAGS, SYMLINK_PERMISSIONS, type TreeEntry, type TreeSource } from "./tree-hash.js";

/** Files above this size (old or new) are shipped whole instead of diffed; see docs/sparkle.md. */
/** A link's target, refused (E_INPUT) when the applier would refuse the delta for it: no delta is made that cannot be applied. */
function linkInside(rel: string, target: Buffer, tree: HashedTree): Buffer {
  // As bytes (a target that is not UTF-8 is refused, not decoded), and a target ending in "/" must name a folder.
  const problem = linkTargetProblem(rel, target, (named) => tree.entries[indexOfRel(tree.entries, named)]?.kind);
  if (problem) throw new RelcastError("E_INPUT", `The new bundle cannot be delta-updated to: ${problem}; relcast makes no delta that would install such a link.`, "Make the link relative and inside the bundle, or remove it.");
  return target;
}

export const DEFAULT_DIFF_LIMIT_BYTES = 16 * 1024 * 1024;
const MIN_SIZE_FOR_DIFF = 4096;
const MIN_SIZE_FOR_CLONE = 4096;
const MIN_SIZE_FOR_CLONE_DIFF = 4096 * 4;

export interface CreateDeltaOptions {
  compression: CompressionName;
  diffLimitBytes?: number;
  tmpDir?: string;
  /** `hashTree(newRoot)` when the caller already has it (one new tree, several deltas). */
  newTree?: HashedTree;
  /** `hashTree(oldRoot)` when the caller already has it. */
  oldTree?: HashedTree;
}

export interface DeltaSummary {
  beforeHash: string;
  afterHash: string;
  size: number;
  counts: { deleted: number; extracted: number; diffed: number; cloned: number; permissions: number; wholeOverLimit: number };
  /** The diff limit used (bytes). */
  diffLimitBytes: number;
  /** Changed files shipped whole because the old or new one is over the diff limit. */
  overLimit: Array<{ rel: string; oldSize: number; size: number }>;
  /** Whole files some of whose bytes were stored uncompressed (judged incompressible), with how many. */
  stored: Array<{ rel: string; size: number; storedBytes: number }>;
}

interface Item {
  rel: string;
  commands: number;
  /** Mode word written for the item, when it has one. */
  mode?: number;
  clonedFrom?: string;
  /** Where the item's data comes from. */
  data?: { kind: "file"; entry: TreeEntry; source: TreeSource } | { kind: "link"; target: Buffer } | { kind: "patch"; file: string; size: number };
}

const caseInsensitive = (a: string, b: string): number => {
  const x = a.toLowerCase();
  const y = b.toLowerCase();
  return x < y ? -1 : x > y ? 1 : 0;
};

function baseName(rel: string): string {
  return rel.slice(rel.lastIndexOf("/") + 1);
}
function dirName(rel: string): string {
  return rel.slice(0, rel.lastIndexOf("/"));
}

/** Same kind and content, by Sparkle's content hashes (SHA-1 of a file's bytes or of a link's target). */
function sameContent(a: TreeEntry, b: TreeEntry, before: HashedTree, after: HashedTree): boolean {
  if (a.kind !== b.kind) return false;
  if (a.kind === "dir") return true;
  if (a.size !== b.size) return false;
  const hashes = (t: HashedTree): ContentHashes => (a.kind === "file" ? t.fileHashes : t.linkHashes);
  return hashes(before).get(a.rel)!.equals(hashes(after).get(b.rel)!);
}

function checkTree(entries: TreeEntry[], which: string): void {
  for (const e of entries) {
    if (e.rel === CUSTOM_ICON_PATH) throw new RelcastError("E_INPUT", `The ${which} bundle has a custom icon set through a resource fork (${e.rel}); Sparkle cannot diff such bundles.`, "Remove the Icon\\r file from the bundle.");
    if (e.kind === "file" && baseName(e.rel) === "Sparkle" && /\/Sparkle\.framework\/Versions\/[^/]+$/.test(dirName(e.rel)) && e.perms !== 0o755) {
      throw new RelcastError("E_INPUT", `Sparkle's executable ${e.rel} in the ${which} bundle has mode 0${e.perms.toString(8)}; Sparkle requires 0755 to apply deltas.`, "chmod 755 it before packaging.");
    }
  }
}

/**
 * What differs between two trees, by path: `now` is the new entry, or null
 * for one that is gone (not listed when a folder above it became a file or
 * link: deleting that folder deletes it). Old paths first in the old tree's
 * order, then new ones in the new tree's: the order the items are sorted
 * from, so that ties sort as they always have. `oldOf` finds any old entry
 * by binary search.
 */
function changedEntries(before: HashedTree, after: HashedTree): { changed: Map<string, { old?: TreeEntry; now: TreeEntry | null }>; oldOf: (rel: string) => TreeEntry | undefined } {
  const olds = inFtsOrder(before.entries);
  const news = inFtsOrder(after.entries);
  const fromOld = new Map<string, { old?: TreeEntry; now: TreeEntry | null }>();
  const added = new Map<string, { old?: TreeEntry; now: TreeEntry | null }>();
  let gone: string | undefined;
  for (let i = 0, j = 0; i < olds.length || j < news.length; ) {
    const old = olds[i];
    const now = news[j];
    const order = old === undefined ? 1 : now === undefined ? -1 : ftsOrder(old.rel, now.rel);
    if (order < 0) {
      // Everything below a folder that became a file or link comes right after it in fts order.
      if (gone === undefined || !old!.rel.startsWith(gone)) fromOld.set(old!.rel, { old, now: null });
      i++;
    } else if (order > 0) {
      added.set(now!.rel, { now: now! });
      j++;
    } else {
      if (!(old!.perms === now!.perms && sameContent(old!, now!, before, after))) fromOld.set(old!.rel, { old, now: now! });
      if (old!.kind === "dir" && now!.kind !== "dir") gone = `${old!.rel}/`;
      i++;
      j++;
    }
  }
  for (const [rel, change] of added) fromOld.set(rel, change);
  const oldOf = (rel: string): TreeEntry | undefined => {
    const i = indexOfRel(olds, rel);
    return i < 0 ? undefined : olds[i];
  };
  return { changed: fromOld, oldOf };
}

let diffing: Promise<unknown> = Promise.resolve();
/** Runs `fn` after every diff started before it has finished. */
function oneDiffAtATime<T>(fn: () => Promise<T>): Promise<T> {
  const run = diffing.then(fn, fn);
  diffing = run.catch(() => undefined);
  return run;
}

export async function createDelta(oldRoot: string, newRoot: string, outFile: string, options: CreateDeltaOptions): Promise<DeltaSummary> {
  // The applier resolves every link of the result as the kernel would and refuses the delta when one leaves the
  // bundle or goes nowhere (delta-apply.ts): a delta to such a tree could never be applied, so none is made.
  const leaving = await linkLeavingTree(newRoot);
  if (leaving) throw new RelcastError("E_INPUT", `The new bundle cannot be delta-updated to: its link /${leaving.rel} ${leaving.why}; relcast makes no delta that would install such a link.`, "Make the link point at something inside the bundle, or remove it.");
  const before = options.oldTree ?? (await hashTree(oldRoot));
  const after = options.newTree ?? (await hashTree(newRoot));
  return createDeltaFromTrees(before, after, outFile, options);
}

/** The same from two hashed trees, wherever they live (folders, zips): their sources give the bytes. */
export async function createDeltaFromTrees(before: HashedTree, after: HashedTree, outFile: string, options: Omit<CreateDeltaOptions, "oldTree" | "newTree">): Promise<DeltaSummary> {
  const limit = options.diffLimitBytes ?? DEFAULT_DIFF_LIMIT_BYTES;
  if (!(Number.isSafeInteger(limit) && limit >= 0 && limit <= MAX_DIFF_FILE_BYTES)) {
    throw new RelcastError("E_USAGE", `the diff limit must be a whole number of bytes from 0 to ${MAX_DIFF_FILE_BYTES} (1 GiB), got ${limit}.`, "Larger changed files are shipped whole anyway: lower deltas.diffLimitMiB / --diff-limit-mib to 1024 or less.");
  }
  checkTree(before.entries, "old");
  checkTree(after.entries, "new");

  // The two trees are walked side by side in fts order (no Map of every path): only what changed is kept.
  const { changed, oldOf } = changedEntries(before, after);
  const newState = { get: (rel: string): TreeEntry | null | undefined => changed.get(rel)?.now };
  const oldState = { get: oldOf, has: (rel: string): boolean => oldOf(rel) !== undefined };
  const keys = [...changed.keys()].sort((a, b) => caseInsensitive(a, b) || (changed.get(a)!.old ? -1 : 1));

  // Where moved files may have come from: only the hashes of files that may be cloned are looked for.
  const wanted = new Set<string>();
  for (const key of keys) {
    const now = changed.get(key)!.now;
    if (now?.kind === "file" && now.size > MIN_SIZE_FOR_CLONE) wanted.add(after.fileHashes.get(key)!.toString("hex"));
  }
  const oldByHash = new Map<string, string[]>();
  if (wanted.size > 0) {
    for (const [rel, hash] of before.fileHashes) {
      const hex = hash.toString("hex");
      if (wanted.has(hex)) oldByHash.set(hex, [...(oldByHash.get(hex) ?? []), rel]);
    }
  }
  const removedByName = new Map<string, string>();
  const oldFrameworkVersions = new Map<string, string>();
  for (const key of keys) {
    if (newState.get(key) !== null) continue;
    const old = oldState.get(key)!;
    if (old.kind === "file") {
      const existing = removedByName.get(baseName(key));
      if (!existing || old.size > oldState.get(existing)!.size) removedByName.set(baseName(key), key);
    }
    if (old.kind === "dir" && baseName(dirName(key)) === "Versions" && dirName(dirName(key)).endsWith(".framework")) oldFrameworkVersions.set(dirName(dirName(key)), key);
  }
  const frameworkSubstitutes = new Map<string, string>();
  for (const key of keys) {
    const entry = newState.get(key);
    if (!entry || oldState.has(key) || entry.kind !== "dir") continue;
    if (baseName(dirName(key)) !== "Versions" || !dirName(dirName(key)).endsWith(".framework")) continue;
    const oldVersion = oldFrameworkVersions.get(dirName(dirName(key)));
    if (oldVersion) frameworkSubstitutes.set(`${key}/`, `${oldVersion}/`);
  }

  const cloneSource = (key: string, entry: TreeEntry): { from: string; diff: boolean } | undefined => {
    if (entry.kind !== "file" || entry.size <= MIN_SIZE_FOR_CLONE) return undefined;
    for (const candidate of oldByHash.get(after.fileHashes.get(key)!.toString("hex")) ?? []) {
      if (oldState.get(candidate)?.kind === "file") return { from: candidate, diff: false };
    }
    if (entry.size <= MIN_SIZE_FOR_CLONE_DIFF || entry.size > limit) return undefined;
    for (const [prefix, substitute] of frameworkSubstitutes) {
      if (!key.startsWith(prefix)) continue;
      const from = substitute + key.slice(prefix.length);
      const old = oldState.get(from);
      if (old?.kind === "file" && old.size <= limit) return { from, diff: true };
    }
    const moved = removedByName.get(baseName(key));
    const old = moved ? oldState.get(moved) : undefined;
    if (moved && old && old.size <= limit) {
      const ratio = Math.min(old.size, entry.size) / Math.max(old.size, entry.size);
      if (ratio >= 0.6) return { from: moved, diff: true };
    }
    return undefined;
  };

  const scratch = await mkdtemp(path.join(options.tmpDir ?? os.tmpdir(), "relcast-delta-"));
  const counts = { deleted: 0, extracted: 0, diffed: 0, cloned: 0, permissions: 0, wholeOverLimit: 0 };
  const overLimit: DeltaSummary["overLimit"] = [];
  try {
    const items: Item[] = [];
    const diffs: Array<{ key: string; from: string; entry: TreeEntry; clone: boolean }> = [];
    for (const key of keys) {
      const entry = newState.get(key)!;
      if (entry === null) {
        items.push({ rel: key, commands: Command.delete });
        counts.deleted++;
        continue;
      }
      const old = oldState.get(key);
      const permsChanged = !!old && old.kind === entry.kind && old.perms !== entry.perms && !(entry.kind === "symlink" && entry.perms !== SYMLINK_PERMISSIONS);
      const contentEqual = !!old && sameContent(old, entry, before, after);
      const diffable = !!old && old.kind === "file" && entry.kind === "file" && entry.size >= MIN_SIZE_FOR_DIFF && !contentEqual;
      if (diffable && old.size <= limit && entry.size <= limit) {
        diffs.push({ key, from: key, entry, clone: false });
        continue;
      }
      if (diffable) {
        counts.wholeOverLimit++;
        overLimit.push({ rel: key, oldSize: old.size, size: entry.size });
      }
      if (contentEqual) {
        if (permsChanged) {
          items.push({ rel: key, commands: Command.modifyPermissions, mode: entry.perms });
          counts.permissions++;
        }
        continue;
      }
      const clone = cloneSource(key, entry);
      if (clone?.diff) {
        diffs.push({ key, from: clone.from, entry, clone: true });
        continue;
      }
      if (clone) {
        const source = oldState.get(clone.from)!;
        const changed = source.perms !== entry.perms;
        items.push({
          rel: key,
          commands: Command.clone | (changed ? Command.modifyPermissions : 0),
          mode: changed ? (source.mode & ~PERMISSION_FLAGS) | entry.perms : undefined,
          clonedFrom: clone.from,
        });
        counts.cloned++;
        continue;
      }
      const typeChanged = !!old && old.kind !== entry.kind;
      const mode = entry.kind === "symlink" ? (entry.mode & S_IFMT) | SYMLINK_PERMISSIONS : entry.mode & (S_IFMT | PERMISSION_FLAGS);
      items.push({
        rel: key,
        commands: Command.extract | (typeChanged ? Command.delete : 0),
        mode,
        data:
          entry.kind === "file"
            ? { kind: "file", entry, source: after.source }
            : entry.kind === "symlink"
              ? { kind: "link", target: linkInside(key, await after.source.readLink(entry), after) }
              : undefined,
      });
      counts.extracted++;
    }

    // Per-file patches, one at a time in the whole process (each holds both files and a suffix array
    // in memory; deltas made side by side must not add those peaks up).
    for (const [i, d] of diffs.entries()) {
      const source = oldState.get(d.from)!;
      const parts = await oneDiffAtATime(async () => createBsdiffPatchParts(await before.source.readFile(source), await after.source.readFile(d.entry)));
      const file = path.join(scratch, `patch-${i}`);
      const fh = await open(file, "wx");
      try {
        await fh.writev(parts);
      } finally {
        await fh.close();
      }
      const patch = { length: parts.reduce((sum, b) => sum + b.length, 0) };
      const changed = source.perms !== d.entry.perms && (d.clone || source.kind === d.entry.kind);
      items.push({
        rel: d.key,
        commands: Command.binaryDiff | (d.clone ? Command.clone : 0) | (changed ? Command.modifyPermissions : 0),
        mode: changed ? (source.mode & ~PERMISSION_FLAGS) | d.entry.perms : undefined,
        clonedFrom: d.clone ? d.from : undefined,
        data: { kind: "patch", file, size: patch.length },
      });
      if (d.clone) counts.cloned++;
      counts.diffed++;
    }

    const payload = path.join(scratch, "payload");
    // Big whole files are judged for storing only where the codec has a stored form.
    const judgeFrom = options.compression === "lzma" || options.compression === "zlib" ? storeMinFileBytes() : undefined;
    const { ranges, stored } = await writePayload(payload, before.hash, after.hash, items, judgeFrom);
    const header = Buffer.alloc(6);
    header.write(DELTA_MAGIC, 0, "latin1");
    header[4] = Compression[options.compression];
    header[5] = COMPRESSION_LEVEL[options.compression] & 0x0f;
    const partial = path.join(path.dirname(path.resolve(outFile)), `.${path.basename(outFile)}.${randomUUID()}.tmp`);
    try {
      await writeFile(partial, header, { flag: "wx" });
      await compressFile(options.compression, payload, partial, ranges);
      await rename(partial, outFile);
    } catch (err) {
      await rm(partial, { force: true });
      throw err;
    }
    const size = (await lstat(outFile)).size;
    return { beforeHash: before.hash.toString("hex"), afterHash: after.hash.toString("hex"), size, counts, diffLimitBytes: limit, overLimit, stored };
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}

/**
 * Writes the uncompressed payload; whole files of at least `judgeFrom` bytes
 * are judged block by block as they go by (incompressible.ts), and the
 * payload ranges to store come back with the bytes stored per file.
 */
async function writePayload(file: string, beforeHash: Buffer, afterHash: Buffer, items: Item[], judgeFrom: number | undefined): Promise<{ ranges: PayloadRange[]; stored: DeltaSummary["stored"] }> {
  const ranges: PayloadRange[] = [];
  const stored: DeltaSummary["stored"] = [];
  let offset = 0;
  const index = new Map<string, number>();
  const paths: string[] = [];
  for (const item of items) {
    index.set(item.rel, paths.length);
    paths.push(item.rel);
  }
  for (const item of items) {
    if (item.clonedFrom !== undefined && !index.has(item.clonedFrom)) {
      index.set(item.clonedFrom, paths.length);
      paths.push(item.clonedFrom);
    }
  }
  const fh = await open(file, "w");
  try {
    const head = Buffer.alloc(4);
    head.writeUInt16LE(MAJOR_VERSION, 0);
    head.writeUInt16LE(MINOR_VERSION, 2);
    const table = Buffer.concat(paths.map((p) => Buffer.from(`${p}\0`, "utf8")));
    const tableLength = Buffer.alloc(8);
    tableLength.writeBigUInt64LE(BigInt(table.length));
    const start = Buffer.concat([head, beforeHash, afterHash, tableLength, table]);
    await fh.write(start);
    offset += start.length;

    const records: Buffer[] = [];
    for (const item of items) {
      const parts: Buffer[] = [Buffer.from([item.commands])];
      const u16 = (v: number): Buffer => {
        const b = Buffer.alloc(2);
        b.writeUInt16LE(v & 0xffff);
        return b;
      };
      const u64 = (v: number): Buffer => {
        const b = Buffer.alloc(8);
        b.writeBigUInt64LE(BigInt(v));
        return b;
      };
      const c = item.commands;
      if (c & Command.clone) {
        if (c & Command.modifyPermissions) parts.push(u16(item.mode!));
        const i = Buffer.alloc(4);
        i.writeUInt32LE(index.get(item.clonedFrom!)!);
        parts.push(i);
        if (c & Command.binaryDiff) parts.push(u64(item.data!.kind === "patch" ? item.data!.size : 0));
      } else if (c & Command.binaryDiff) {
        if (c & Command.modifyPermissions) parts.push(u16(item.mode!));
        parts.push(u64(item.data!.kind === "patch" ? item.data!.size : 0));
      } else if (c & Command.extract) {
        parts.push(u16(item.mode!));
        if (item.data?.kind === "file") parts.push(u64(item.data.entry.size));
        else if (item.data?.kind === "link") parts.push(u16(item.data.target.length));
      } else if (c & Command.modifyPermissions) {
        parts.push(u16(item.mode!));
      }
      records.push(...parts);
    }
    records.push(Buffer.from([Command.end]));
    const commands = Buffer.concat(records);
    await fh.write(commands);
    offset += commands.length;

    const chunk = Buffer.allocUnsafe(1 << 20);
    for (const item of items) {
      const data = item.data;
      if (!data) continue;
      if (data.kind === "link") {
        await fh.write(data.target);
        offset += data.target.length;
        continue;
      }
      if (data.kind === "file") {
        const judge = judgeFrom !== undefined && data.entry.size >= judgeFrom ? new BlockJudge(offset, ranges) : undefined;
        let written = 0;
        for await (const bytes of data.source.streamFile(data.entry)) {
          written += bytes.length;
          if (written > data.entry.size) break;
          judge?.update(bytes);
          await fh.write(bytes);
        }
        if (written !== data.entry.size) throw new RelcastError("E_INPUT", `${data.entry.rel} changed size while the delta was written.`, "Do not change the bundle while relcast reads it.");
        offset += written;
        judge?.finish();
        if (judge?.stored) stored.push({ rel: data.entry.rel, size: data.entry.size, storedBytes: judge.stored });
        continue;
      }
      offset += data.size;
      const source = await open(data.file, "r");
      try {
        let left = data.size;
        while (left > 0) {
          const { bytesRead } = await source.read(chunk, 0, Math.min(chunk.length, left), null);
          if (bytesRead === 0) throw new RelcastError("E_INTERNAL", "a patch shrank while the delta was written.");
          await fh.write(chunk.subarray(0, bytesRead));
          left -= bytesRead;
        }
      } finally {
        await source.close();
      }
    }
  } finally {
    await fh.close();
  }
  return { ranges, stored };
}
