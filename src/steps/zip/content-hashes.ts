import { RelcastError } from "../../core/errors.js";
import { BytePool, compareTreePaths } from "../../core/compact-columns.js";

const SHA1_BYTES = 20;

/**
 * The SHA-1 of every file's and symlink's bytes as they went into the zip, by
 * zip entry name: names in one byte pool, hashes end to end in one buffer
 * (about 80 bytes an entry, where a Map of names to Buffers costs several
 * hundred and keeps V8's heap large for the rest of the publish). Entries
 * come in the zip's order, which is the bundle walk's (see compareTreePaths),
 * so a name is found by binary search.
 */
export class ContentHashes implements Iterable<[string, Buffer]> {
  private readonly names = new BytePool();
  private hashes = Buffer.alloc(SHA1_BYTES * 1024);

  get size(): number {
    return this.names.length;
  }

  /** Adds the next entry; names must come in walk order (the zip's). */
  add(name: string, sha1: Uint8Array): void {
    if (sha1.length !== SHA1_BYTES) throw new RelcastError("E_INTERNAL", `content hash of ${name} is ${sha1.length} bytes, not ${SHA1_BYTES}`);
    const index = this.names.push(name);
    if (index > 0 && compareTreePaths(this.names.view(index - 1), this.names.view(index)) >= 0) {
      throw new RelcastError("E_INTERNAL", `content hashes out of the walk's order at ${name}`);
    }
    if ((index + 1) * SHA1_BYTES > this.hashes.length) {
      const bigger = Buffer.alloc(this.hashes.length * 2);
      this.hashes.copy(bigger);
      this.hashes = bigger;
    }
    this.hashes.set(sha1, index * SHA1_BYTES);
  }

  /** The hash of entry `name` (a copy), or undefined when the zip has no such file or link. */
  get(name: string): Buffer | undefined {
    const key = Buffer.from(name, "utf8");
    let low = 0;
    let high = this.names.length - 1;
    while (low <= high) {
      const middle = (low + high) >>> 1;
      const order = compareTreePaths(this.names.view(middle), key);
      if (order === 0) return this.hashAt(middle);
      if (order < 0) low = middle + 1;
      else high = middle - 1;
    }
    return undefined;
  }

  private hashAt(index: number): Buffer {
    return Buffer.from(this.hashes.subarray(index * SHA1_BYTES, (index + 1) * SHA1_BYTES));
  }

  *keys(): IterableIterator<string> {
    for (let i = 0; i < this.names.length; i++) yield this.names.text(i);
  }

  *[Symbol.iterator](): IterableIterator<[string, Buffer]> {
    for (let i = 0; i < this.names.length; i++) yield [this.names.text(i), this.hashAt(i)];
  }
}
