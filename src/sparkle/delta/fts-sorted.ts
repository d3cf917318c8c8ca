/**
 * A tree's entries in fts order, so that they can be walked side by side
 * with another tree's and searched by binary search: the tree's own array
 * when it already is (every tree relcast reads or walks is), else a sorted
 * copy (a tree put together by hand).
 */
import { ftsOrder, type TreeEntry } from "./tree-hash.js";

export function inFtsOrder(entries: TreeEntry[]): TreeEntry[] {
  for (let i = 1; i < entries.length; i++) if (ftsOrder(entries[i - 1]!.rel, entries[i]!.rel) >= 0) return [...entries].sort((a, b) => ftsOrder(a.rel, b.rel));
  return entries;
}
