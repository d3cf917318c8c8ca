import path from "node:path";

const BY_EXTENSION: Record<string, string> = {
  ".dmg": "application/x-apple-diskimage",
  ".zip": "application/zip",
  ".json": "application/json",
  ".xml": "application/xml",
  ".html": "text/html; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".txt": "text/plain; charset=utf-8",
};

/** Sparkle fetches the appcast as generic XML; application/xml is what its docs and S3 hosts use. */
export const APPCAST_CONTENT_TYPE = "application/xml";

export function contentTypeFor(key: string): string {
  return BY_EXTENSION[path.extname(key).toLowerCase()] ?? "application/octet-stream";
}

export const CACHE_IMMUTABLE = "public, max-age=31536000, immutable";
export const CACHE_NO_CACHE = "no-cache";
