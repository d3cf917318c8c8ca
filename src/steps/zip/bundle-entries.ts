import { isUtf8 } from "node:buffer";
import { lstatSync, readdirSync, readlinkSync } from "node:fs";
import path from "node:path";
import { badNameError, namePartProblem } from "../../core/entry-name-rule.js";
import { MacOSNames, sameMacOSNameError } from "../../core/macos-name.js";
import { BytePool, float64Column, uint8Column } from "../../core/compact-columns.js";
import { nonUtf8LinkError, nonUtf8NameError, printableBytes } from "../../core/utf8-bytes.js";

export type BundleEntry =
  | { kind: "dir"; name: string }
  | { kind: "file"; name: string; size: number; executable: boolean; identity: FileIdentity }
  | { kind: "symlink"; name: string; target: string };

/** What the listing saw of a file: the zip refuses a file that is not this one when it is read. */
export interface FileIdentity {
  dev: number;
  ino: number;
  size: number;
  mtimeMs: number;
}

/** Files that Finder and copies from other file systems leave behind; Sparkle's zips must not hold them. */
export function isJunkName(base: string): boolean {
  return base === ".DS_Store" || base.startsWith("._") || base === "__MACOSX";
}

/** Where a listed entry lies on disk: its name below the bundle's parent folder (not kept per entry: 70,000 paths are megabytes). */
export function entryPath(bundleDir: string, name: string): string {
  return path.join(path.dirname(path.resolve(bundleDir)), name);
}

const DIR = 0;
const FILE = 1;
const EXECUTABLE = 2;
const SYMLINK = 3;

/**
 * The bundle's entries in zip order, kept as columns (names in one byte pool,
 * kinds, sizes and each file's identity in typed arrays): a bundle of 100,000
 * files costs a few megabytes, not an object and its strings per file.
 * `entry(i)` makes a short-lived object for the one entry being zipped.
 */
export class BundleListing {
  private readonly names = new BytePool();
  private readonly kinds = uint8Column();
  private readonly sizes = float64Column();
  private readonly devs = float64Column();
  private readonly inodes = float64Column();
  private readonly mtimes = float64Column();
  /** Link targets by entry index: links are few. */
  private readonly targets = new Map<number, string>();
  /** Bytes of all files together. */
  totalBytes = 0;

  get length(): number {
    return this.names.length;
  }

  addDir(name: string): void {
    this.push(name, DIR, 0, 0, 0, 0);
  }

  addFile(name: string, executable: boolean, identity: FileIdentity): void {
    this.push(name, executable ? EXECUTABLE : FILE, identity.size, identity.dev, identity.ino, identity.mtimeMs);
    this.totalBytes += identity.size;
  }

  addSymlink(name: string, target: string): void {
    this.targets.set(this.push(name, SYMLINK, 0, 0, 0, 0), target);
  }

  private push(name: string, kind: number, size: number, dev: number, ino: number, mtimeMs: number): number {
    this.kinds.push(kind);
    this.sizes.push(size);
    this.devs.push(dev);
    this.inodes.push(ino);
    this.mtimes.push(mtimeMs);
    return this.names.push(name);
  }

  entry(index: number): BundleEntry {
    const name = this.names.text(index);
    const kind = this.kinds.get(index);
    if (kind === DIR) return { kind: "dir", name };
    if (kind === SYMLINK) return { kind: "symlink", name, target: this.targets.get(index)! };
    const size = this.sizes.get(index);
    return { kind: "file", name, size, executable: kind === EXECUTABLE, identity: { dev: this.devs.get(index), ino: this.inodes.get(index), size, mtimeMs: this.mtimes.get(index) } };
  }

  *[Symbol.iterator](): IterableIterator<BundleEntry> {
    for (let i = 0; i < this.length; i++) yield this.entry(i);
  }

  /** The symlinks (zip entry name and target), to check the zip kept them. */
  symlinks(): Array<{ name: string; target: string }> {
    return [...this.targets].map(([index, target]) => ({ name: this.names.text(index), target }));
  }
}

/**
 * Every entry below the bundle, in byte-wise sorted order (a stable order is
 * what makes the zip reproducible), with the bundle folder as the top entry.
 */
export async function listBundleEntries(bundleDir: string): Promise<{ entries: BundleListing; skipped: string[] }> {
  const top = path.basename(path.resolve(bundleDir));
  const topName = namePartProblem(top);
  if (topName) throw badNameError(top, topName);
  const entries = new BundleListing();
  entries.addDir(`${top}/`);
  const skipped: string[] = [];
  // Synchronous on purpose: through the promise API each lstat costs about 50 µs of round trips (150 ms
  // for a 3,000-file bundle, all of it before the first chunk can start), ten times the system call.
  // Names and link targets are read as bytes and refused unless UTF-8 (core/utf8-bytes.ts): preflight checked
  // them, but the bundle may have changed since, and decoding would store U+FFFD instead of what was signed.
  function walk(abs: string, rel: string): void {
    const names = readdirSync(abs, { encoding: "buffer" }).sort(Buffer.compare);
    // Preflight refused two spellings of one macOS name; the bundle may have gained one since (as with the names' bytes).
    const seen = new MacOSNames();
    for (const bytes of names) {
      if (!isUtf8(bytes)) throw nonUtf8NameError(`${rel}${printableBytes(bytes)}`);
      const name = bytes.toString("utf8");
      const badName = namePartProblem(name);
      if (badName) throw badNameError(`${rel}${name}`, badName);
      const earlier = seen.twinOf(name);
      if (earlier !== undefined) throw sameMacOSNameError(rel.slice(0, -1), earlier, name);
      // A plain join: `abs` is resolved and the name is one checked component (no "/", ".", ".." or NUL).
      const childAbs = `${abs}/${name}`;
      const childRel = `${rel}${name}`;
      if (isJunkName(name)) {
        skipped.push(childRel);
        continue;
      }
      const st = lstatSync(childAbs);
      if (st.isSymbolicLink()) {
        const target = readlinkSync(childAbs, { encoding: "buffer" });
        if (!isUtf8(target)) throw nonUtf8LinkError(childRel, target);
        entries.addSymlink(childRel, target.toString("utf8"));
      } else if (st.isDirectory()) {
        entries.addDir(`${childRel}/`);
        walk(childAbs, `${childRel}/`);
      } else if (st.isFile()) {
        entries.addFile(childRel, (st.mode & 0o111) !== 0, { dev: st.dev, ino: st.ino, size: st.size, mtimeMs: st.mtimeMs });
      } else {
        skipped.push(childRel);
      }
    }
  }
  walk(path.resolve(bundleDir), `${top}/`);
  return { entries, skipped };
}
