/**
 * A bundle zip read in place as a hashed tree (no unpacking to disk): the
 * entry list from its central directory, the layout as `extractBundleZip`
 * would make it, and Sparkle's content hash of every file and link, from its
 * inflated bytes or (for the zip the zip step just wrote) as the zip step
 * took them while zipping.
 * Where every entry's raw (compressed) bytes are is kept, in the directory's
 * table (zip-entry-table.ts) beside the tree's entries, so an older zip can
 * be compared entry by entry against this one (see stored-zip-tree.ts).
 */
import { createReadStream } from "node:fs";
import { open } from "node:fs/promises";
import { RelcastError } from "../../core/errors.js";
import { LocalZipEntries } from "./local-zip-entries.js";
import { readStoredZipTree } from "./stored-zip-tree.js";
import { readZipDirectory, type ZipDirectory } from "./zip-directory.js";
import type { RawZipEntry } from "./zip-entry-table.js";
import { badZip, LaidOutRawEntries, layOutZip, type ZipBundleTree, type ZipLayout } from "./zip-layout.js";
import { HashSlots, indexOfRel } from "./tree-table-hashes.js";
import { CUSTOM_ICON_PATH, treeHashOf, type TreeEntry, type TreeSource } from "./tree-hash.js";

export type { RawZipEntry, ZipBundleTree };

const COMPARE_BUFFER = 1 << 20;
const READ_CHUNK = 1 << 20;

/** Content hashes by zip entry name: a Map, or the zip step's compact table (steps/zip/content-hashes.ts). */
export interface ContentHashLookup {
  readonly size: number;
  get(name: string): Buffer | undefined;
}

export interface OpenZipBundleTreeOptions {
  /**
   * SHA-1 of every file's and symlink's bytes, by zip entry name, as the
   * writer of this very zip took them while zipping: the tree is then built
   * from them and the central directory, and no entry is inflated. Without
   * them (a zip from elsewhere) the whole zip is read and hashed.
   */
  contentHashes?: ContentHashLookup | undefined;
}

/**
 * The content hashes the zip's writer gave, checked to cover exactly the zip's files and links, in table form
 * (one 20-byte slot per entry, tree-table-hashes.ts): no Map and no Buffer object per file.
 */
function fromGivenHashes(file: string, layout: ZipLayout, dir: ZipDirectory, given: ContentHashLookup): Pick<ZipBundleTree, "hash" | "entries" | "fileHashes" | "linkHashes"> {
  const slots = new HashSlots(layout.entries);
  let used = 0;
  layout.entries.forEach((entry, i) => {
    if (entry.kind === "dir") return;
    const z = layout.zipIndex[i]!;
    const hash = z >= 0 ? given.get(dir.name(z)) : undefined;
    if (!hash || hash.length !== 20) throw new RelcastError("E_INTERNAL", `the zip step gave no content hash for ${entry.rel} of ${file}`);
    used++;
    if (entry.rel !== CUSTOM_ICON_PATH) slots.set(i, hash);
  });
  if (used !== given.size) throw new RelcastError("E_INTERNAL", `the zip step gave ${given.size} content hashes for ${file}, which holds ${used} files and links`);
  const hash = treeHashOf(layout.entries, (_e, i) => slots.at(i)!);
  return { hash, entries: layout.entries, fileHashes: slots.view("file"), linkHashes: slots.view("symlink") };
}

/** Contents hashed in one sequential pass over the file (large reads, one inflater per entry), not entry by entry. */
async function scanContents(file: string, layout: ZipLayout): Promise<Pick<ZipBundleTree, "hash" | "entries" | "fileHashes" | "linkHashes">> {
  const scanned = await readStoredZipTree(createReadStream(file, { highWaterMark: READ_CHUNK }), { name: file, keepLimit: 0 });
  if (scanned.entries.length !== layout.entries.length || scanned.entries.some((e, i) => e.rel !== layout.entries[i]!.rel || e.kind !== layout.entries[i]!.kind)) {
    throw badZip(file, "its entries read differently in two passes");
  }
  return { hash: scanned.hash, entries: scanned.entries, fileHashes: scanned.fileHashes, linkHashes: scanned.linkHashes };
}

export async function openZipBundleTree(file: string, options: OpenZipBundleTreeOptions = {}): Promise<ZipBundleTree> {
  const handle = await open(file, "r");
  try {
    // The central directory in a few large reads (not two small reads an entry), and nothing kept per entry but
    // what the tree needs: a bundle of 70,000 files is read in bounded time and memory.
    const readRange = async (start: number, end: number): Promise<Buffer> => {
      const out = Buffer.allocUnsafe(end - start + 1);
      const { bytesRead } = await handle.read(out, 0, out.length, start);
      return out.subarray(0, bytesRead);
    };
    let dir: ZipDirectory;
    try {
      dir = await readZipDirectory(readRange, (await handle.stat()).size, file);
    } catch (err) {
      throw badZip(file, (err as Error).message.replace(/^the central directory of .* cannot be read: /, ""));
    }
    const layout = layOutZip(file, dir);
    const entriesOf = new LocalZipEntries(handle, file);
    const compareBuffers: Buffer[] = [];
    const { hash, entries, fileHashes, linkHashes } = options.contentHashes ? fromGivenHashes(file, layout, dir, options.contentHashes) : await scanContents(file, layout);
    // Each tree entry's zip entry by index into the directory's table (`entries` has the layout's paths in its order).
    const raw = new LaidOutRawEntries(entries, layout.zipIndex, dir);
    const rawOf = (rel: string): RawZipEntry => {
      const r = raw.at(indexOfRel(entries, rel));
      if (!r) throw new RelcastError("E_INTERNAL", `${file} has no entry for ${rel}`);
      return r;
    };
    const stream = (entry: TreeEntry): AsyncGenerator<Buffer> => entriesOf.inflated(rawOf(entry.rel));
    const source: TreeSource = {
      streamFile: stream,
      async readFile(entry) {
        // Straight into a buffer of the entry's size: no second copy of a file about to be diffed.
        const out = Buffer.allocUnsafe(entry.size);
        let at = 0;
        for await (const chunk of stream(entry)) {
          if (at + chunk.length > out.length) throw badZip(file, `${entry.rel} is longer than its header says`);
          chunk.copy(out, at);
          at += chunk.length;
        }
        if (at !== out.length) throw badZip(file, `${entry.rel} is shorter than its header says`);
        return out;
      },
      readLink: (entry) => source.readFile(entry),
    };

    return {
      hash,
      entries,
      fileHashes,
      linkHashes,
      source,
      file,
      raw,
      contentHash: (rel) => fileHashes.get(rel) ?? linkHashes.get(rel),
      async readRaw(rel, at, length) {
        const out = Buffer.allocUnsafe(length);
        await entriesOf.readInto(rawOf(rel), at, out);
        return out;
      },
      async equalsRaw(rel, at, bytes) {
        // One buffer per caller at a time would need a lock; a small pool of them is enough for the few readers.
        const buffer = compareBuffers.pop() ?? Buffer.allocUnsafe(COMPARE_BUFFER);
        try {
          for (let done = 0; done < bytes.length; done += buffer.length) {
            const part = bytes.subarray(done, done + buffer.length);
            await entriesOf.readInto(rawOf(rel), at + done, buffer.subarray(0, part.length));
            if (!part.equals(buffer.subarray(0, part.length))) return false;
          }
          return true;
        } finally {
          compareBuffers.push(buffer);
        }
      },
      close: () => handle.close(),
    };
  } catch (err) {
    await handle.close();
    throw err;
  }
}
