/**
 * Applies a Sparkle delta to a hashed tree in memory and answers the tree hash
 * of the result, writing no files: the check publish makes before it uploads
 * a delta, on old trees read straight from their zips. It carries out every
 * item as `applyDelta` does on disk (same order, same rules for modes,
 * clones and patches; every patch really applied and the result hashed) but
 * keeps only each entry's kind, permissions and content hash. Like
 * `applyDelta` it reads only the delta file, never the creator's item lists.
 */
import { createHash } from "node:crypto";
import path from "node:path";
import { RelcastError } from "../../core/errors.js";
import { applyBsdiffPatch } from "./bspatch.js";
import { checkLinkTarget, corrupt, type DeltaHeader, openDelta, type OpenedDelta } from "./delta-apply.js";
import { DEFAULT_DELTA_LIMITS, type DeltaLimits, maxPatchedFileBytes } from "./delta-limits.js";
import { Command, S_IFDIR, S_IFLNK, S_IFMT, S_IFREG } from "./delta-format.js";
import { inFtsOrder } from "./fts-sorted.js";
import { type EntryKind, ftsOrder, type HashedTree, PERMISSION_FLAGS, type TreeEntry, treeHashOf } from "./tree-hash.js";
import { indexOfRel } from "./tree-table-hashes.js";

interface Node {
  kind: EntryKind;
  perms: number;
  /** SHA-1 of a file's bytes or a link's target. */
  hash?: Buffer;
}

export interface TreeApplyResult {
  header: DeltaHeader;
  items: number;
  /** Tree hash of the result (hex); equal to `header.afterHash`, or the call throws. */
  afterHash: string;
}

export async function applyDeltaToTree(oldTree: HashedTree, deltaFile: string, options: { limits?: DeltaLimits } = {}): Promise<TreeApplyResult> {
  const limits = options.limits ?? DEFAULT_DELTA_LIMITS;
  let opened: OpenedDelta | undefined;
  try {
    opened = await openDelta(deltaFile, limits);
    const { header, items, reader } = opened;
    if (oldTree.hash.toString("hex") !== header.beforeHash) {
      throw new RelcastError("E_VERIFY", `the old bundle is not the one this delta was made from (tree hash ${oldTree.hash.toString("hex")}, delta expects ${header.beforeHash}).`, "Apply the delta to the release named in its file name.");
    }
    // The old tree is read in place (binary search over its entries, in fts order); only what the items touch is
    // kept, in `changed` (null: removed). No Map or node of every path: a bundle of 70,000 files and a delta of a few.
    const olds = inFtsOrder(oldTree.entries);
    const oldAt = (rel: string): TreeEntry | undefined => {
      const i = indexOfRel(olds, rel);
      return i < 0 ? undefined : olds[i];
    };
    const changed = new Map<string, Node | null>();
    const nodeOf = (e: TreeEntry): Node => ({ kind: e.kind, perms: e.perms, hash: e.kind === "file" ? oldTree.fileHashes.get(e.rel) : e.kind === "symlink" ? oldTree.linkHashes.get(e.rel) : undefined });
    const state = {
      get(rel: string): Node | undefined {
        const node = changed.get(rel);
        if (node !== undefined) return node ?? undefined;
        const e = oldAt(rel);
        if (!e) return undefined;
        // A node taken from the old tree is kept, so a change of its permissions sticks.
        const made = nodeOf(e);
        changed.set(rel, made);
        return made;
      },
      has: (rel: string): boolean => state.get(rel) !== undefined,
      set: (rel: string, node: Node): void => void changed.set(rel, node),
    };
    const remove = (rel: string): void => {
      const node = state.get(rel);
      changed.set(rel, null);
      if (node !== undefined && node.kind !== "dir") return;
      // Only a folder has entries below it: in the old tree they follow it (fts order); new ones are in `changed`.
      const prefix = `${rel}/`;
      const at = indexOfRel(olds, rel);
      if (at >= 0) for (let i = at + 1; i < olds.length && olds[i]!.rel.startsWith(prefix); i++) changed.set(olds[i]!.rel, null);
      for (const key of changed.keys()) if (key.startsWith(prefix)) changed.set(key, null);
    };
    /**
     * No symlink on the way (the disk applier refuses it); an item that writes
     * also needs its parent folders (the file system does). Deleting what is
     * already gone is fine, as `rm -rf` is.
     */
    const checkParents = (rel: string, writes: boolean): void => {
      const parts = rel.split("/");
      for (let i = 2; i < parts.length; i++) {
        const at = parts.slice(0, i).join("/");
        const node = state.get(at);
        if (node?.kind === "symlink") throw corrupt(deltaFile, `${rel} would be written through the symlink ${at.slice(1)}`);
        if (!node && !writes) return;
        if (!node) throw corrupt(deltaFile, `${rel} has no parent folder ${at.slice(1)}`);
        if (node.kind !== "dir") throw corrupt(deltaFile, `${rel} lies below the file ${at.slice(1)}`);
      }
    };
    const oldFile = (rel: string, what: string) => {
      const entry = oldAt(rel);
      if (entry?.kind !== "file") throw corrupt(deltaFile, `${what} ${rel} is not a file in the old bundle`);
      return entry;
    };

    for (const item of items) {
      const c = item.commands;
      checkParents(item.rel, c !== Command.delete);
      if (c & Command.delete) remove(item.rel);

      if (c & Command.clone && !(c & Command.binaryDiff)) {
        const from = oldFile(item.clonedFrom!, "clone source");
        remove(item.rel);
        state.set(item.rel, { kind: "file", perms: from.perms, hash: oldTree.fileHashes.get(from.rel) });
      } else if (c & Command.binaryDiff) {
        const patch = await reader.bytes(item.dataLength);
        const from = oldFile(c & Command.clone ? item.clonedFrom! : item.rel, "patch source");
        const result = applyBsdiffPatch(await oldTree.source.readFile(from), patch, maxPatchedFileBytes(limits));
        const existing = state.get(item.rel);
        // bspatch rewrites the file in place, keeping its mode; clones take the source's mode.
        const perms = c & Command.clone || existing?.kind !== "file" ? from.perms : existing.perms;
        remove(item.rel);
        state.set(item.rel, { kind: "file", perms, hash: createHash("sha1").update(result).digest() });
      } else if (c & Command.extract) {
        const type = item.mode & S_IFMT;
        if (type === S_IFREG) {
          const hash = createHash("sha1");
          await reader.hashNext(item.dataLength, hash);
          remove(item.rel);
          state.set(item.rel, { kind: "file", perms: item.mode & PERMISSION_FLAGS, hash: hash.digest() });
        } else if (type === S_IFLNK) {
          const target = await reader.bytes(item.dataLength);
          checkLinkTarget(deltaFile, item.rel, target);
          remove(item.rel);
          state.set(item.rel, { kind: "symlink", perms: 0o755, hash: createHash("sha1").update(target).digest() });
        } else if (type === S_IFDIR) {
          if (state.has(item.rel)) throw corrupt(deltaFile, `folder ${item.rel} already exists`);
          state.set(item.rel, { kind: "dir", perms: item.mode & PERMISSION_FLAGS });
        }
      }

      if (c & Command.modifyPermissions) {
        const node = state.get(item.rel);
        if (!node) throw corrupt(deltaFile, `permissions for ${item.rel}, which does not exist`);
        if (node.kind !== "symlink") node.perms = item.mode & PERMISSION_FLAGS;
      }
    }

    await reader.expectEnd();
    // The result in fts order: the old entries left as they were, merged with the changed ones (sorted, few).
    const touched = [...changed.entries()].filter(([, node]) => node !== null).map(([rel, node]) => ({ rel, kind: node!.kind, perms: node!.perms, hash: node!.hash })).sort((a, b) => ftsOrder(a.rel, b.rel));
    function* result(): Generator<{ rel: string; kind: EntryKind; perms: number; hash?: Buffer }> {
      let t = 0;
      for (const e of olds) {
        while (t < touched.length && ftsOrder(touched[t]!.rel, e.rel) < 0) yield touched[t++]!;
        if (changed.has(e.rel)) continue;
        yield { rel: e.rel, kind: e.kind, perms: e.perms, hash: nodeOf(e).hash };
      }
      while (t < touched.length) yield touched[t++]!;
    }
    const afterHash = treeHashOf(result(), (e) => (e as { hash?: Buffer }).hash!).toString("hex");
    if (afterHash !== header.afterHash) {
      throw new RelcastError("E_VERIFY", `Applying ${path.basename(deltaFile)} gives tree hash ${afterHash}, not the ${header.afterHash} it promises.`, "Recreate the delta; do not publish this one.");
    }
    return { header, items: items.length, afterHash };
  } finally {
    await opened?.close();
  }
}
