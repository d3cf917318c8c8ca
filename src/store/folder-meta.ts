import type { Stats } from "node:fs";
import { contentTypeFor } from "./content-types.js";
import type { ObjectMeta } from "./object-store.js";

/**
 * A folder store object's metadata from its stat. The ETag is the inode,
 * size and modification time: every put makes a new inode, so a replaced
 * object never shows its old ETag. One rule for every reader and for the
 * copy's source pin (folder-copy.ts).
 */
export function folderMeta(key: string, st: Stats): ObjectMeta {
  return {
    key,
    size: st.size,
    etag: `"${st.ino.toString(16)}-${st.size.toString(16)}-${st.mtimeMs.toString(16).replace(".", "")}"`,
    lastModified: st.mtime,
    contentType: contentTypeFor(key),
  };
}
