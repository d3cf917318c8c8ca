/**
 * Per-entry tables for bundles of many files: a column of numbers is one
 * typed array and a column of names one byte pool, instead of one JS object
 * (and its strings) per entry. A bundle of 100,000 files then holds a few
 * megabytes in a handful of allocations, where objects cost hundreds of bytes
 * each and, worse, let V8's heap grow to several times what is live.
 */
type NumberArray = Float64Array | Uint32Array | Uint8Array;

/** A growable column of numbers (doubling, as an array does). */
export class NumberColumn<T extends NumberArray> {
  private data: T;
  length = 0;

  constructor(private readonly make: (capacity: number) => T, capacity = 1024) {
    this.data = make(capacity);
  }

  push(value: number): number {
    if (this.length === this.data.length) {
      const bigger = this.make(this.data.length * 2);
      bigger.set(this.data);
      this.data = bigger;
    }
    this.data[this.length] = value;
    return this.length++;
  }

  get(index: number): number {
    return this.data[index]!;
  }

  set(index: number, value: number): void {
    this.data[index] = value;
  }
}

export const float64Column = (capacity?: number) => new NumberColumn((n) => new Float64Array(n), capacity);
export const uint32Column = (capacity?: number) => new NumberColumn((n) => new Uint32Array(n), capacity);
export const uint8Column = (capacity?: number) => new NumberColumn((n) => new Uint8Array(n), capacity);

/** Byte strings appended end to end in one growable buffer; each is read back as a view (no copy) or a string. */
export class BytePool {
  private bytes = Buffer.allocUnsafe(64 * 1024);
  private used = 0;
  /** ends[i]: where item i ends (it starts where item i - 1 ends). */
  private readonly ends = float64Column();

  get length(): number {
    return this.ends.length;
  }

  /** Appends a string (as UTF-8) or bytes; answers its index. */
  push(item: string | Uint8Array): number {
    const size = typeof item === "string" ? Buffer.byteLength(item, "utf8") : item.length;
    if (this.used + size > this.bytes.length) {
      const bigger = Buffer.allocUnsafe(Math.max(this.bytes.length * 2, this.used + size));
      this.bytes.copy(bigger, 0, 0, this.used);
      this.bytes = bigger;
    }
    if (typeof item === "string") this.bytes.write(item, this.used, "utf8");
    else this.bytes.set(item, this.used);
    this.used += size;
    return this.ends.push(this.used);
  }

  /** Item `index`'s bytes: a view into the pool, valid until the next push (copy it to keep it). */
  view(index: number): Buffer {
    return this.bytes.subarray(index === 0 ? 0 : this.ends.get(index - 1), this.ends.get(index));
  }

  text(index: number): string {
    return this.bytes.toString("utf8", index === 0 ? 0 : this.ends.get(index - 1), this.ends.get(index));
  }
}

/**
 * Compares two paths of a bundle the way its walk orders them: component by
 * component, each byte-wise, a parent before its children. That is byte-wise
 * order with "/" taken as lower than any byte a name can hold.
 */
export function compareTreePaths(a: Uint8Array, b: Uint8Array): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a[i] === 0x2f ? -1 : a[i]!;
    const y = b[i] === 0x2f ? -1 : b[i]!;
    if (x !== y) return x - y;
  }
  return a.length - b.length;
}
