import { RelcastError } from "../core/errors.js";

/**
 * Object keys are relative, slash-separated and never climb out of the store
 * root. Checked by every store, so a crafted key cannot reach outside it.
 */
export function assertSafeKey(key: string): string {
  const bad =
    key.length === 0 ||
    key.startsWith("/") ||
    key.includes("\\") ||
    key.includes("\0") ||
    key.split("/").some((part) => part === "" || part === "." || part === "..");
  if (bad) {
    throw new RelcastError("E_INTERNAL", `refusing unsafe object key "${key}"`, "object keys are relative paths without '.', '..' or empty segments");
  }
  return key;
}

/** Internal files the folder store keeps next to objects; never listed or served. */
export const FOLDER_STORE_INTERNAL = /(^|\/)\.relcast-/;
