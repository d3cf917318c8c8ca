/**
 * Unpacks a bundle zip into a folder the way an unzipper on macOS lays it out
 * (modes from the Unix attributes; folders without an entry get 0755, files
 * without attributes 0644), refusing anything that could write outside the
 * target: absolute names, "..", backslashes, entries below a symlink, more
 * than one top-level folder. Returns the bundle folder.
 *
 * A folder's own entry may come after its children (zip writers order
 * entries as they like; unzip and the publish's layout, zip-layout.ts, take
 * it as the folder's mode): only a second entry for one path is a duplicate.
 * Folder modes are set after every entry is written, deepest first, so a
 * read-only folder (0555) still gets its children when not run as root.
 */
import { createWriteStream } from "node:fs";
import { chmod, lstat, mkdir, symlink } from "node:fs/promises";
import path from "node:path";
import { pipeline } from "node:stream/promises";
import yauzl from "yauzl";
import { RelcastError } from "../../core/errors.js";
import { linkTargetLengthProblem } from "../../core/utf8-bytes.js";
import { zipEntryKindProblem, zipNameBytesProblem } from "./zip-entry-rule.js";
import { safeNameParts, unixModeOf, zipLinkTargetProblem } from "./zip-layout.js";


function bad(zip: string, why: string): RelcastError {
  return new RelcastError("E_INPUT", `Cannot unpack ${zip}: ${why}.`, "Use the zip relcast published for that release, or a zip of the bundle as relcast publishes it (one top-level bundle folder; UTF-8 names without \\; modes its owner can read; links inside the bundle).");
}

function openZip(file: string): Promise<yauzl.ZipFile> {
  return new Promise((resolve, reject) =>
    // Names as bytes: yauzl would read a name without the UTF-8 flag as CP437; the one rule is UTF-8 or refused.
    yauzl.open(file, { lazyEntries: true, decodeStrings: false, validateEntrySizes: true }, (err, zip) => (err ? reject(err) : resolve(zip!))),
  );
}

function readStream(zip: yauzl.ZipFile, entry: yauzl.Entry): Promise<NodeJS.ReadableStream> {
  return new Promise((resolve, reject) => zip.openReadStream(entry, (err, stream) => (err ? reject(err) : resolve(stream!))));
}

export async function extractBundleZip(zipFile: string, into: string): Promise<string> {
  let zip: yauzl.ZipFile;
  try {
    zip = await openZip(zipFile);
  } catch (err) {
    throw bad(zipFile, (err as Error).message);
  }
  await mkdir(into, { recursive: true });
  const links = new Set<string>();
  const files = new Set<string>();
  const made = new Set<string>();
  /** Folders the zip has an entry of its own for, and the modes to give them once everything is written. */
  const listedDirs = new Set<string>();
  const dirModes: Array<{ abs: string; depth: number; mode: number }> = [];
  let top: string | undefined;
  // Folders are made one component at a time, and only where nothing else is: never through a link or a file.
  const ensureDir = async (rel: string, entryName: string): Promise<void> => {
    const parts = rel.split("/");
    for (let i = 1; i <= parts.length; i++) {
      const sub = parts.slice(0, i).join("/");
      if (made.has(sub)) continue;
      if (links.has(sub)) throw bad(zipFile, `${entryName} lies below the symlink ${sub}`);
      if (files.has(sub)) throw bad(zipFile, `${entryName} lies below the file ${sub}`);
      await mkdir(path.join(into, sub), { mode: 0o755 });
      made.add(sub);
    }
  };
  let current = "";
  try {
    for (;;) {
      const entry = await new Promise<yauzl.Entry | undefined>((resolve, reject) => {
        const onEntry = (e: yauzl.Entry): void => {
          zip.off("end", onEnd);
          zip.off("error", onError);
          resolve(e);
        };
        const onEnd = (): void => {
          zip.off("entry", onEntry);
          zip.off("error", onError);
          resolve(undefined);
        };
        const onError = (err: Error): void => {
          zip.off("entry", onEntry);
          zip.off("end", onEnd);
          reject(bad(zipFile, err.message));
        };
        zip.once("entry", onEntry);
        zip.once("end", onEnd);
        zip.once("error", onError);
        zip.readEntry();
      });
      if (!entry) break;
      const nameBytes = entry.fileName as unknown as Buffer;
      const notUtf8 = zipNameBytesProblem(nameBytes);
      if (notUtf8) throw bad(zipFile, notUtf8);
      const fileName = nameBytes.toString("utf8");
      const parts = safeNameParts(zipFile, fileName);
      const name = parts.join("/");
      current = name;
      if (top === undefined) top = parts[0];
      else if (parts[0] !== top) throw bad(zipFile, `more than one top-level entry (${top}, ${parts[0]})`);
      const kindAndPerms = zipEntryKindProblem(fileName, unixModeOf(entry.versionMadeBy, entry.externalFileAttributes), entry.uncompressedSize);
      if (typeof kindAndPerms === "string") throw bad(zipFile, kindAndPerms);
      const { kind, perms } = kindAndPerms;
      const abs = path.join(into, name);
      const isDir = kind === "dir";
      // The top entry is the bundle folder: a link there would make the "bundle" any folder on this machine.
      if (parts.length === 1 && !isDir) throw bad(zipFile, `the top-level entry ${name} is not a folder`);
      const parent = parts.slice(0, -1).join("/");
      if (parent) await ensureDir(parent, name);
      // A folder made for earlier children may still get its own entry (its mode); anything else twice is a duplicate.
      if (links.has(name) || files.has(name) || listedDirs.has(name) || (made.has(name) && !isDir)) throw bad(zipFile, `duplicate entry ${name}`);
      if (isDir) {
        await ensureDir(name, name);
        listedDirs.add(name);
        dirModes.push({ abs, depth: parts.length, mode: perms });
      } else if (kind === "symlink") {
        const byLength = linkTargetLengthProblem(entry.uncompressedSize);
        if (byLength) throw bad(zipFile, `symlink ${name} ${byLength}`);
        const chunks: Buffer[] = [];
        for await (const chunk of await readStream(zip, entry)) chunks.push(chunk as Buffer);
        const target = Buffer.concat(chunks);
        const problem = zipLinkTargetProblem(name, target);
        if (problem) throw bad(zipFile, problem);
        await symlink(target, abs);
        links.add(name);
      } else {
        await pipeline(await readStream(zip, entry), createWriteStream(abs, { flags: "wx", mode: 0o600 }));
        await chmod(abs, perms);
        files.add(name);
      }
    }
    // Deepest first: a folder keeps its search permission until every folder below it has its mode.
    dirModes.sort((a, b) => b.depth - a.depth);
    for (const d of dirModes) await chmod(d.abs, d.mode);
  } catch (err) {
    // A path or link target this system cannot make is the zip's doing: name the entry (not an internal error).
    if ((err as NodeJS.ErrnoException).code === "ENAMETOOLONG") throw bad(zipFile, `${current} cannot be made here (ENAMETOOLONG: its path or link target is too long)`);
    throw err;
  } finally {
    zip.close();
  }
  if (top === undefined) throw bad(zipFile, "the zip is empty");
  const root = path.join(into, top);
  if (!(await lstat(root)).isDirectory()) throw bad(zipFile, `the top-level entry ${top} is not a folder`);
  return root;
}
