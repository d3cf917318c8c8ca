/**
 * The one UTF-8 rule for what a bundle holds as raw bytes: file names and
 * symlink targets. The kernel keeps both as bytes, but a zip entry name and
 * a link's stored target are read as UTF-8 by every unzipper and by Sparkle
 * (and macOS's file systems want UTF-8 names): bytes that are not UTF-8 would
 * be decoded with U+FFFD, so the shipped bundle would differ from the one
 * that was signed. They are refused where they are read, never decoded.
 */
import { isUtf8 } from "node:buffer";
import { RelcastError } from "./errors.js";

/** Bytes for messages: valid UTF-8 as is, other bytes as \xNN. */
export function printableBytes(bytes: Buffer): string {
  if (isUtf8(bytes)) return bytes.toString("utf8");
  return [...bytes].map((b) => (b >= 0x20 && b < 0x7f && b !== 0x5c ? String.fromCharCode(b) : `\\x${b.toString(16).padStart(2, "0")}`)).join("");
}

/** A link target for messages: printable (see printableBytes), cut to its first 120 characters. */
export function shownTarget(bytes: Buffer): string {
  const shown = printableBytes(bytes);
  return shown.length > 120 ? `${shown.slice(0, 120)}… (${bytes.length} bytes)` : shown;
}

const CONVMV = "convmv -f latin1 -t utf8 --notest -r <bundle>";

/** A bundle file name (`shown`: its path for messages, see printableBytes) that is not UTF-8. */
export function nonUtf8NameError(shown: string): RelcastError {
  return new RelcastError("E_INPUT", `the bundle has a file name that is not valid UTF-8: ${shown}`, `rename it to UTF-8 (e.g. ${CONVMV}); zip entries and macOS need UTF-8 names`);
}

/** A bundle symlink (`shown`: its path) whose target bytes are not UTF-8. */
export function nonUtf8LinkError(shown: string, target: Buffer): RelcastError {
  return new RelcastError(
    "E_INPUT",
    `the bundle has a symlink whose target is not valid UTF-8: ${shown} -> ${printableBytes(target)}`,
    `point it at a UTF-8 name (rename what it names to UTF-8, e.g. ${CONVMV}, then remake the link with ln -sfn); zip entries and macOS need UTF-8 names, and a zip would store the target changed`,
  );
}

/**
 * The most bytes a link target may have: macOS's PATH_MAX is 1024 bytes
 * including the closing NUL (Darwin's sys/syslimits.h), so symlink(2) on the
 * Mac that installs the update cannot make a longer target (ENAMETOOLONG).
 * Linux allows 4095; the Mac's limit is the one that counts.
 */
export const MAX_LINK_TARGET_BYTES = 1023;

/** The length part of {@link linkTargetBytesProblem}, for a reader that knows the length before the bytes (a zip's listing). */
export function linkTargetLengthProblem(length: number): string | undefined {
  if (length === 0) return "has an empty or NUL-holding target";
  if (length > MAX_LINK_TARGET_BYTES) return `has a ${length}-byte target, longer than the ${MAX_LINK_TARGET_BYTES} bytes macOS can make (PATH_MAX 1024, with its NUL)`;
  return undefined;
}

/**
 * Why a link target's bytes cannot be a link anywhere (empty: no kernel makes
 * one; a NUL ends the path early; longer than {@link MAX_LINK_TARGET_BYTES}:
 * macOS cannot make it; not UTF-8: decoded differently by every reader);
 * undefined when they can. The sentence follows "symlink X".
 * `showBytes: false` gives one fixed sentence per problem (no string made per
 * call: for a check run on every small entry of a zip before its kind is known).
 */
export function linkTargetBytesProblem(target: Buffer, options: { showBytes?: boolean } = {}): string | undefined {
  if (target.length === 0 || target.includes(0)) return "has an empty or NUL-holding target";
  const tooLong = linkTargetLengthProblem(target.length);
  if (tooLong) return tooLong;
  if (!isUtf8(target)) return options.showBytes === false ? "has a target that is not valid UTF-8" : `has a target that is not valid UTF-8 (${printableBytes(target).slice(0, 200)})`;
  return undefined;
}
