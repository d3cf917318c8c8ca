import { INDEX_KEY } from "../../domain/release-layout.js";

export type KeyResult = { ok: true; key: string } | { ok: false; status: 400 | 404; reason: string };

/**
 * Maps a request target to a store key, refusing anything that could step
 * outside the store or reach internal files: absolute-form targets, `..` and
 * `.` segments (raw or percent-encoded), encoded slashes and backslashes,
 * NUL, empty segments, and hidden names (the folder store's `.relcast-*`).
 * A path ending in `/` serves its index.html.
 */
export function keyForRequestTarget(target: string): KeyResult {
  if (!target.startsWith("/")) return { ok: false, status: 400, reason: "the request target must be a path (origin-form)" };
  const rawPath = target.split(/[?#]/, 1)[0]!;
  if (rawPath.startsWith("//")) return { ok: false, status: 400, reason: "empty path segment" };
  if (/%(2f|5c|00)|\\|\0/i.test(rawPath)) return { ok: false, status: 400, reason: "encoded slash, backslash or NUL in the path" };
  const segments: string[] = [];
  const parts = rawPath.slice(1).split("/");
  for (const [i, part] of parts.entries()) {
    let name: string;
    try {
      name = decodeURIComponent(part);
    } catch {
      return { ok: false, status: 400, reason: "malformed percent-encoding" };
    }
    if (name === "." || name === "..") return { ok: false, status: 400, reason: "dot segments are not allowed" };
    if (name === "") {
      if (i === parts.length - 1) break;
      return { ok: false, status: 400, reason: "empty path segment" };
    }
    if (name.startsWith(".")) return { ok: false, status: 404, reason: "hidden names are not served" };
    if (/[\u0000-\u001f\u007f]/.test(name)) return { ok: false, status: 400, reason: "control characters in the path" };
    segments.push(name);
  }
  if (rawPath.endsWith("/") || segments.length === 0) segments.push(INDEX_KEY);
  return { ok: true, key: segments.join("/") };
}
