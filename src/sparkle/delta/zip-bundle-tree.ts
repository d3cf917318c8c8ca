/**
 * A bundle zip read in place as a hashed tree (no unpacking to disk): the
 * entry list through yauzl, the layout as `extractBundleZip` would make it,
 * and Sparkle's content hash of every file and link from its inflated bytes.
 * The raw (compressed) form of every entry is kept, so an older zip can be
 * compared entry by entry against this one (see stored-zip-tree.ts).
 */
import { createReadStream } from "node:fs";
import { open, type FileHandle } from "node:fs/promises";
import yauzl from "yauzl";
import { RelcastError } from "../../core/errors.js";
import { readStoredZipTree } from "./stored-zip-tree.js";
import { badZip, layOutZip, relOfZipName, unixModeOf, type RawZipEntry, type ZipBundleTree, type ZipListing } from "./zip-layout.js";
import { CUSTOM_ICON_PATH, treeHashOf, type TreeEntry, type TreeSource } from "./tree-hash.js";

export type { RawZipEntry, ZipBundleTree };

const LOCAL_HEADER = 0x04034b50;
const COMPARE_BUFFER = 1 << 20;
const READ_CHUNK = 1 << 20;

function openZip(file: string): Promise<yauzl.ZipFile> {
  return new Promise((resolve, reject) =>
    yauzl.open(file, { lazyEntries: true, decodeStrings: true, validateEntrySizes: true, strictFileNames: true, autoClose: false }, (err, zip) => (err ? reject(err) : resolve(zip!))),
  );
}

async function listEntries(zip: yauzl.ZipFile): Promise<yauzl.Entry[]> {
  const out: yauzl.Entry[] = [];
  await new Promise<void>((resolve, reject) => {
    zip.on("entry", (e: yauzl.Entry) => {
      out.push(e);
      zip.readEntry();
    });
    zip.once("end", () => resolve());
    zip.once("error", reject);
    zip.readEntry();
  });
  return out;
}

export interface OpenZipBundleTreeOptions {
  /**
   * SHA-1 of every file's and symlink's bytes, by zip entry name, as the
   * writer of this very zip took them while zipping: the tree is then built
   * from them and the central directory, and no entry is inflated. Without
   * them (a zip from elsewhere) the whole zip is read and hashed.
   */
  contentHashes?: ReadonlyMap<string, Buffer> | undefined;
}

/** The content hashes the zip's writer gave, checked to cover exactly the zip's files and links. */
function givenHashes(file: string, layout: ReturnType<typeof layOutZip>, given: ReadonlyMap<string, Buffer>): { fileHashes: Map<string, Buffer>; linkHashes: Map<string, Buffer> } {
  const fileHashes = new Map<string, Buffer>();
  const linkHashes = new Map<string, Buffer>();
  let used = 0;
  for (const entry of layout.entries) {
    if (entry.kind === "dir") continue;
    const hash = given.get(layout.zipName.get(entry.rel) ?? "");
    if (!hash || hash.length !== 20) throw new RelcastError("E_INTERNAL", `the zip step gave no content hash for ${entry.rel} of ${file}`);
    used++;
    if (entry.rel !== CUSTOM_ICON_PATH) (entry.kind === "file" ? fileHashes : linkHashes).set(entry.rel, hash);
  }
  if (used !== given.size) throw new RelcastError("E_INTERNAL", `the zip step gave ${given.size} content hashes for ${file}, which holds ${used} files and links`);
  return { fileHashes, linkHashes };
}

function fromGivenHashes(file: string, layout: ReturnType<typeof layOutZip>, given: ReadonlyMap<string, Buffer>): Pick<ZipBundleTree, "hash" | "entries" | "fileHashes" | "linkHashes"> {
  const { fileHashes, linkHashes } = givenHashes(file, layout, given);
  const hash = treeHashOf(layout.entries, (e) => (e.kind === "file" ? fileHashes : linkHashes).get(e.rel)!);
  return { hash, entries: layout.entries, fileHashes, linkHashes };
}

/** Contents hashed in one sequential pass over the file (large reads, one inflater per entry), not entry by entry. */
async function scanContents(file: string, layout: ReturnType<typeof layOutZip>): Promise<Pick<ZipBundleTree, "hash" | "entries" | "fileHashes" | "linkHashes">> {
  const scanned = await readStoredZipTree(createReadStream(file, { highWaterMark: READ_CHUNK }), { name: file, keepLimit: 0 });
  if (scanned.entries.length !== layout.entries.length || scanned.entries.some((e, i) => e.rel !== layout.entries[i]!.rel || e.kind !== layout.entries[i]!.kind)) {
    throw badZip(file, "its entries read differently in two passes");
  }
  return { hash: scanned.hash, entries: scanned.entries, fileHashes: scanned.fileHashes, linkHashes: scanned.linkHashes };
}

export async function openZipBundleTree(file: string, options: OpenZipBundleTreeOptions = {}): Promise<ZipBundleTree> {
  let zip: yauzl.ZipFile;
  let listed: yauzl.Entry[];
  try {
    zip = await openZip(file);
    listed = await listEntries(zip);
  } catch (err) {
    throw badZip(file, (err as Error).message);
  }
  let fh: FileHandle | undefined;
  try {
    const listing: ZipListing[] = listed.map((e) => ({ name: e.fileName, unixMode: unixModeOf(e.versionMadeBy, e.externalFileAttributes), size: e.uncompressedSize }));
    const layout = layOutZip(file, listing);
    const byName = new Map(listed.map((e) => [e.fileName, e]));
    const yauzlEntry = (rel: string): yauzl.Entry => {
      const e = byName.get(layout.zipName.get(rel) ?? "");
      if (!e) throw new RelcastError("E_INTERNAL", `${file} has no entry for ${rel}`);
      return e;
    };
    const raw = new Map<string, RawZipEntry>();
    for (const e of listed) {
      const rel = relOfZipName(e.fileName);
      if (rel) raw.set(rel, { name: e.fileName, method: e.compressionMethod, crc32: e.crc32, compressedSize: e.compressedSize, size: e.uncompressedSize, localHeaderOffset: e.relativeOffsetOfLocalHeader });
    }
    const handle = await open(file, "r");
    fh = handle;
    const dataOffsets = new Map<string, number>();
    const dataOffset = async (rel: string): Promise<number> => {
      const known = dataOffsets.get(rel);
      if (known !== undefined) return known;
      const r = raw.get(rel)!;
      const head = Buffer.alloc(30);
      await handle.read(head, 0, 30, r.localHeaderOffset);
      if (head.readUInt32LE(0) !== LOCAL_HEADER) throw badZip(file, `no local header for ${r.name}`);
      const at = r.localHeaderOffset + 30 + head.readUInt16LE(26) + head.readUInt16LE(28);
      dataOffsets.set(rel, at);
      return at;
    };

    const compareBuffers: Buffer[] = [];
    const readInto = async (rel: string, at: number, out: Buffer): Promise<void> => {
      const start = (await dataOffset(rel)) + at;
      let done = 0;
      while (done < out.length) {
        const { bytesRead } = await handle.read(out, done, out.length - done, start + done);
        if (bytesRead === 0) throw badZip(file, `${raw.get(rel)!.name} ends early`);
        done += bytesRead;
      }
    };

    async function* stream(entry: TreeEntry): AsyncGenerator<Buffer> {
      const e = yauzlEntry(entry.rel);
      const readable = await new Promise<NodeJS.ReadableStream>((resolve, reject) => zip.openReadStream(e, (err, s) => (err ? reject(badZip(file, err.message)) : resolve(s!))));
      for await (const chunk of readable) yield chunk as Buffer;
    }
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

    const { hash, entries, fileHashes, linkHashes } = options.contentHashes ? fromGivenHashes(file, layout, options.contentHashes) : await scanContents(file, layout);
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
        await readInto(rel, at, out);
        return out;
      },
      async equalsRaw(rel, at, bytes) {
        // One buffer per caller at a time would need a lock; a small pool of them is enough for the few readers.
        const buffer = compareBuffers.pop() ?? Buffer.allocUnsafe(COMPARE_BUFFER);
        try {
          for (let done = 0; done < bytes.length; done += buffer.length) {
            const part = bytes.subarray(done, done + buffer.length);
            await readInto(rel, at + done, buffer.subarray(0, part.length));
            if (!part.equals(buffer.subarray(0, part.length))) return false;
          }
          return true;
        } finally {
          compareBuffers.push(buffer);
        }
      },
      async close() {
        zip.close();
        await handle.close();
      },
    };
  } catch (err) {
    zip.close();
    await fh?.close();
    throw err;
  }
}
