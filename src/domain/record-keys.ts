import { printable } from "../core/printable.js";
/**
 * The keys of stored records and yank markers, read back from a listing.
 * The folder name is only ever compared and quoted, never turned into a
 * key or path: what a listing returns cannot make relcast read or write
 * anywhere it would not itself.
 */
const RECORD_KEY = /^releases\/([^/]+)\/release\.json$/;
const YANK_KEY = /^releases\/([^/]+)\/yank\.json$/;
const ROLLOUT_KEY = /^releases\/([^/]+)\/rollout\.json$/;

export type StoredKey = { kind: "record" | "yank" | "rollout"; folder: string };

export function storedKeyOf(key: string): StoredKey | undefined {
  const record = RECORD_KEY.exec(key);
  if (record) return { kind: "record", folder: record[1]! };
  const yank = YANK_KEY.exec(key);
  if (yank) return { kind: "yank", folder: yank[1]! };
  const rollout = ROLLOUT_KEY.exec(key);
  if (rollout) return { kind: "rollout", folder: rollout[1]! };
  return undefined;
}

/** A folder name fit for a message: quoted and cut when it holds anything a version would not. */
export function quotedFolder(folder: string): string {
  return /^[0-9A-Za-z.+-]{1,128}$/.test(folder) ? folder : printable(JSON.stringify(folder.slice(0, 128)));
}
