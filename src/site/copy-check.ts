import { digestStream } from "../core/file-digest.js";
import type { ObjectMeta, ObjectStore } from "../store/object-store.js";
import { sameObjects } from "./same-bytes.js";

/** What a release's record pins of one of its objects: its size, and its SHA-256 (older records have none for the disk image). */
export interface Pin {
  sizeBytes: number;
  sha256: string | undefined;
}

/** Why a copy is rewritten: it is not there, it carries headers relcast does not write, or its bytes are not the record's. */
export type RewriteReason = "missing" | "headers" | "bytes";

/** How a public copy compares with the record, and what a repair does about it. */
export type CopyVerdict =
  /** The copy holds the pinned bytes. */
  | { kind: "same" }
  /** Rewrite it from the source, exactly the version hashed here (`source`: its size and ETag as read). */
  | { kind: "rewrite"; source: { size: number; etag: string }; reason: RewriteReason }
  /** The source is gone (a publish still under way, or a damaged store): the caller decides. */
  | { kind: "no-source" }
  /** The source does not hold the pinned bytes either: nothing may be copied from it. */
  | { kind: "refused"; problem: string };

/** SHA-256, size and ETag of an object as stored, streamed; undefined when it is not there. */
async function storedHash(store: ObjectStore, key: string): Promise<{ sha256: string; sizeBytes: number; etag: string } | undefined> {
  const got = await store.getStream(key);
  if (!got) return undefined;
  try {
    return { ...(await digestStream(got.stream)), etag: got.meta.etag };
  } finally {
    got.stream.destroy();
  }
}

/** The headers relcast writes on a public copy. */
export interface CopyHeaders {
  contentType: string;
  cacheControl: string;
}

/**
 * Whether a copy carries only the headers relcast writes, with its values:
 * a store that does not keep a header (the folder store: no Cache-Control)
 * reports none, and that passes.
 */
export function headersAsWritten(meta: ObjectMeta, want: CopyHeaders): boolean {
  if (meta.foreignHeaders !== undefined) return false;
  if (meta.contentType !== undefined && meta.contentType !== want.contentType) return false;
  return meta.cacheControl === undefined || meta.cacheControl === want.cacheControl;
}

const short = (sha: string) => `${sha.slice(0, 12)}…`;

/**
 * Judges the public copy `to` (in `target`) of the release's own object
 * `from` (in `source`) by its bytes: the copy is hashed and compared with
 * the record, not with the source, so a damaged source never "repairs" a
 * good copy. A copy that differs is rewritten only from a source that hashes
 * to the record's SHA-256, and the write is pinned to the version hashed
 * (its ETag: the store copies that one or nothing). The copy is read once
 * when it is right; the source only when the copy must be rewritten.
 * Without a SHA-256 in the record (older disk images) the copy is compared
 * with the source's bytes.
 */
export async function judgeCopy(source: ObjectStore, target: ObjectStore, from: string, to: string, pin: Pin, headers?: CopyHeaders): Promise<CopyVerdict> {
  const found = await target.head(to);
  // A copy served with headers relcast does not write (a redirect, an encoding) is not the copy, whatever its bytes.
  const copy = found && (!headers || headersAsWritten(found, headers)) ? found : undefined;
  const reason: RewriteReason = !found ? "missing" : !copy ? "headers" : "bytes";
  if (pin.sha256 === undefined) {
    const head = await source.head(from);
    if (!head) return { kind: "no-source" };
    if (copy && head.size === pin.sizeBytes && (await sameObjects(source, target, from, to))) return { kind: "same" };
    if (head.size !== pin.sizeBytes) return { kind: "refused", problem: refusal(source, from, to, `is ${head.size} bytes; its record says ${pin.sizeBytes}`) };
    return { kind: "rewrite", source: { size: head.size, etag: head.etag }, reason };
  }
  if (copy && copy.size === pin.sizeBytes) {
    const held = await storedHash(target, to);
    if (held && held.sizeBytes === pin.sizeBytes && held.sha256 === pin.sha256) return { kind: "same" };
  }
  const src = await storedHash(source, from);
  if (!src) return { kind: "no-source" };
  if (src.sizeBytes !== pin.sizeBytes) return { kind: "refused", problem: refusal(source, from, to, `is ${src.sizeBytes} bytes; its record says ${pin.sizeBytes}`) };
  if (src.sha256 !== pin.sha256) return { kind: "refused", problem: refusal(source, from, to, `has SHA-256 ${short(src.sha256)}; its record says ${short(pin.sha256)}`) };
  return { kind: "rewrite", source: { size: src.sizeBytes, etag: src.etag }, reason };
}

function refusal(source: ObjectStore, from: string, to: string, what: string): string {
  return `${source.uriFor(from)} ${what}, so ${to} was not rewritten from it (nothing was written for it): the release's own object is damaged; restore it from a backup, or publish that build again under a new version`;
}

/** The refusal of a copy whose source, the release's own object, is gone. */
export function sourceMissing(source: ObjectStore, from: string, to: string): string {
  return `${source.uriFor(from)} is missing, so ${to} could not be written from it (nothing was written for it): restore the release's own object from a backup, or publish that build again under a new version`;
}
