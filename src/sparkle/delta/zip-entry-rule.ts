/**
 * One reading of a zip entry's stored name and Unix mode, for both of
 * relcast's zip readers (the unpacker, zip-tree.ts, and the in-place layout,
 * zip-layout.ts): names as bytes that must be UTF-8, a kind that name and mode
 * agree on, and modes an update may carry and its owner can read.
 */
import { isUtf8 } from "node:buffer";
import { printableBytes } from "../../core/utf8-bytes.js";
import { S_IFDIR, S_IFLNK, S_IFMT } from "./delta-format.js";
import { type EntryKind, PERMISSION_FLAGS } from "./tree-hash.js";

const S_ISUID = 0o4000;
const S_ISGID = 0o2000;

/** Why a stored entry name's bytes cannot be read as a name (not UTF-8: refused, never decoded as CP437 or with U+FFFD). */
export function zipNameBytesProblem(bytes: Buffer): string | undefined {
  return isUtf8(bytes) ? undefined : `the entry name ${printableBytes(bytes)} is not valid UTF-8 (a zip written without UTF-8 names; macOS and Sparkle need UTF-8)`;
}

/**
 * The kind of an entry from its name and Unix mode, and its permission bits,
 * by one rule for both readers (the unpacker and the in-place layout). Refused:
 * a name and a mode that disagree (`D/` with a link's mode; `D` with a
 * folder's mode and data: unzip writes a file, bsdtar a folder), setuid or
 * setgid bits (a delta applied as root would recreate them; relcast's own zips
 * never have them), and modes the owner cannot read (a file without r, a
 * folder without r and x): what unpacks must be readable to be diffed.
 * Returns the kind and permissions, or a sentence saying why not.
 */
export function zipEntryKindProblem(name: string, unixMode: number, size: number): { kind: EntryKind; perms: number } | string {
  const type = unixMode & S_IFMT;
  const slash = name.endsWith("/");
  if (slash && type !== 0 && type !== S_IFDIR) return `${name} ends in "/" (a folder) but its mode ${unixMode.toString(8)} is not a folder's`;
  if (!slash && type === S_IFDIR && size > 0) return `${name} has a folder's mode but holds ${size} bytes of data (unzippers disagree on what it is)`;
  const kind: EntryKind = slash || type === S_IFDIR ? "dir" : type === S_IFLNK ? "symlink" : "file";
  const perms = unixMode & PERMISSION_FLAGS || (kind === "dir" ? 0o755 : 0o644);
  if (kind !== "symlink" && perms & (S_ISUID | S_ISGID)) return `${name} has the setuid or setgid bit (mode ${perms.toString(8).padStart(4, "0")}), which an update must not carry`;
  if (kind === "dir" && (perms & 0o500) !== 0o500) return `the folder ${name} has mode ${perms.toString(8).padStart(4, "0")}, which its owner cannot list (needs r and x)`;
  if (kind === "file" && (perms & 0o400) === 0) return `the file ${name} has mode ${perms.toString(8).padStart(4, "0")}, which its owner cannot read`;
  return { kind, perms };
}
