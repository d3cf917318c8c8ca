/**
 * How much a delta may claim. A delta's body is compressed: a few kilobytes
 * can claim (and decompress to) gigabytes. Every size in the body (the path
 * table, each extracted file, each patch, the patched file a bsdiff header
 * names) is checked against these before anything that size is read, and
 * the body is decompressed only up to what its items claim. Callers that
 * know the new tree (verify, publish's check) pass its sizes; the CLI's
 * `delta info` and `delta apply` use the defaults.
 *
 * Two kinds of file data, two kinds of limit: an extracted (whole) file is
 * streamed from the body to disk or to a hash, so its size is bounded only by
 * the limits below (files of any size a zip can hold, ZIP64 included); a
 * bsdiff patch and the file it makes are held in memory, so no patch may make
 * a file over MAX_DIFF_FILE_BYTES, the largest file relcast diffs.
 */
import { RelcastError } from "../../core/errors.js";
import type { HashedTree } from "./tree-hash.js";

export interface DeltaLimits {
  /** The largest file the delta may create or patch into being. */
  maxFileBytes: number;
  /** All item data together (extracted files, patches, link targets). */
  maxDataBytes: number;
  /** Where the limits come from, for messages ("the new release's zip holds"). */
  basis?: string;
}

const GIB = 1024 ** 3;
/**
 * For `delta info` and `delta apply`, which do not know the new tree: a plugin
 * that ships model files (several GiB each, ZIP64 entries) fits with room to
 * spare, a delta claiming more is hostile or broken. Whole files are streamed,
 * so these bound disk use, not memory.
 */
export const DEFAULT_DELTA_LIMITS: DeltaLimits = { maxFileBytes: 64 * GIB, maxDataBytes: 256 * GIB };
/**
 * The largest file relcast diffs (creator) or patches (applier). A diff holds
 * old + new + its suffix array (about 6.2 × the file) in memory, and a Node
 * Buffer tops out near 2 GiB on some platforms; larger changed files are
 * shipped whole instead (`deltas.diffLimitMiB` may go up to this, not past it).
 */
export const MAX_DIFF_FILE_BYTES = 1 * GIB;
/** Path table: PATH_MAX (1024) bytes for each of a million paths at most. */
export const MAX_PATH_TABLE_BYTES = 64 * 1024 * 1024;
/** A link target: the one rule of core/utf8-bytes.ts (macOS's PATH_MAX, 1024 with its NUL). */
export { MAX_LINK_TARGET_BYTES } from "../../core/utf8-bytes.js";
/** bsdiff's control block: 24 bytes per run; a patch this far over its new size is not one bsdiff wrote. */
const PATCH_SLACK_BYTES = 1024 * 1024;

/**
 * Limits from the tree the delta must build: no file larger than its largest
 * file, no more data than its files could need. A bsdiff patch carries its
 * new file's bytes (diff and extra blocks) plus 24 control bytes per run, and
 * bsdiff starts a run only after a match of more than 8 bytes: at most about
 * three times the file; four leaves room.
 */
export function limitsForNewTree(tree: Pick<HashedTree, "entries">): DeltaLimits {
  let largest = 0;
  let total = 0;
  for (const e of tree.entries) {
    if (e.kind !== "file") continue;
    largest = Math.max(largest, e.size);
    total += e.size;
  }
  return { maxFileBytes: largest, maxDataBytes: 4 * total + PATCH_SLACK_BYTES, basis: "the new release's zip allows" };
}

/** The largest file a bsdiff patch may make under `limits`. */
export function maxPatchedFileBytes(limits: DeltaLimits): number {
  return Math.min(limits.maxFileBytes, MAX_DIFF_FILE_BYTES);
}

/** The largest patch a file of `maxPatchedFileBytes(limits)` can need. */
export function maxPatchBytes(limits: DeltaLimits): number {
  return 32 + 4 * maxPatchedFileBytes(limits) + PATCH_SLACK_BYTES;
}

export function claimTooLarge(file: string, what: string, claimed: number | bigint, limit: number, why: string): RelcastError {
  return new RelcastError(
    "E_INPUT",
    `${file} is not a delta relcast will read: ${what} claims ${claimed} bytes, more than the ${limit} ${why}.`,
    "A delta that claims more than its release can hold is damaged or hostile: do not publish or apply it; recreate it with `relcast delta create`.",
  );
}
