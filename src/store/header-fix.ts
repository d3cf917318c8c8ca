import type { ObjectMeta, ObjectStore } from "./object-store.js";

const show = (v: string | undefined): string => (v === undefined ? "(none)" : JSON.stringify(v));

/**
 * What an object's served headers lack against what relcast writes for it:
 * another Content-Type or Cache-Control, and any header relcast never writes
 * that changes what a client gets (ObjectMeta.foreignHeaders). Empty on the
 * folder store, which keeps no headers (a static server derives them from
 * the name). `cacheControl` undefined: not compared (verify without config).
 */
export function servedHeaderDifferences(store: ObjectStore, meta: ObjectMeta, wants: { contentType: string; cacheControl?: string | undefined }): string[] {
  if (store.location.scheme === "file") return [];
  const found: string[] = [];
  if (meta.contentType !== wants.contentType) found.push(`Content-Type ${show(meta.contentType)} (relcast writes ${show(wants.contentType)})`);
  if (wants.cacheControl !== undefined && meta.cacheControl !== wants.cacheControl) {
    found.push(`Cache-Control ${show(meta.cacheControl)} (relcast writes ${show(wants.cacheControl)})`);
  }
  for (const [name, value] of Object.entries(meta.foreignHeaders ?? {})) found.push(`${name} ${show(value)} (relcast writes none)`);
  return found;
}

/**
 * The command that gives an object relcast's headers back without changing a
 * byte: a copy onto itself that replaces every header (so one relcast never
 * writes is dropped). No relcast command does it, on purpose: the object may
 * be another run's, and only its owner may decide.
 */
export function headerFixCommand(store: ObjectStore, key: string, wants: { contentType: string; cacheControl?: string | undefined }): string {
  const uri = store.uriFor(key);
  return `aws s3 cp ${uri} ${uri} --metadata-directive REPLACE --content-type "${wants.contentType}"`
    + (wants.cacheControl !== undefined ? ` --cache-control "${wants.cacheControl}"` : "");
}
