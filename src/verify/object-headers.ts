import { derivedCacheControl } from "../site/cache-control.js";
import { CACHE_IMMUTABLE, contentTypeFor } from "../store/content-types.js";
import { headerFixCommand } from "../store/header-fix.js";
import type { ObjectMeta, ObjectStore } from "../store/object-store.js";

/** The Cache-Control values relcast writes (the config's, else its defaults). */
export interface CacheControlSettings {
  immutable: string;
  mutable: string;
}

/**
 * The store wrapped so that every answer verify already asks for (a HEAD, a
 * GET, a ranged GET) leaves the object's headers in `seen`: the headers are
 * checked without a request of their own. The folder store keeps no headers,
 * so there is nothing to compare there (see {@link headerProblems}).
 */
export function recordingHeaders(store: ObjectStore): { store: ObjectStore; seen: Map<string, ObjectMeta> } {
  const seen = new Map<string, ObjectMeta>();
  const note = (meta: ObjectMeta | undefined): void => {
    if (meta?.contentType !== undefined) seen.set(meta.key, meta);
  };
  const wrapped = new Proxy(store, {
    get(target, prop) {
      if (prop === "head") return async (key: string) => { const meta = await target.head(key); note(meta && { ...meta, key }); return meta; };
      if (prop === "get") return async (key: string) => { const got = await target.get(key); note(got && { ...got.meta, key }); return got; };
      if (prop === "getStream") {
        return async (key: string, range?: Parameters<ObjectStore["getStream"]>[1]) => { const got = await target.getStream(key, range); note(got && { ...got.meta, key }); return got; };
      }
      const value = Reflect.get(target, prop, target) as unknown;
      return typeof value === "function" ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
  return { store: wrapped, seen };
}

/** Objects that never change once written (a release's own files, their versioned public copies): the rule `relcast serve` derives headers by. */
function isImmutable(key: string): boolean {
  return derivedCacheControl(key) === CACHE_IMMUTABLE;
}

/** Only what relcast writes has headers relcast chose: the publisher's own files at the root (robots.txt…) are theirs. */
function isRelcasts(key: string): boolean {
  return /^(releases|downloads|icons|release-notes|api)\//.test(key) || /^[^/]+\.html$/.test(key);
}

/** Why a header relcast never writes is a problem: what it does to a client. */
function harm(header: string): string {
  if (header === "Content-Encoding") return " (a client decodes the bytes before it reads them: a feed, catalog or zip turns to garbage and signatures fail)";
  if (header === "Content-Disposition") return " (a browser saves or shows the object otherwise than relcast's pages mean)";
  if (header === "x-amz-website-redirect-location") return " (S3 website hosting answers a redirect elsewhere instead of the object)";
  return "";
}

interface Mismatch { header: string; has: string | undefined; wants: string | undefined; keys: string[] }

/**
 * Each object's Content-Type and Cache-Control, as the store served them, held
 * against what relcast writes for its key, and any header relcast never
 * writes that changes what a client gets (Content-Encoding,
 * Content-Disposition, a website redirect). A feed made `immutable` freezes
 * Sparkle clients behind a CDN for a year; a zip served as `text/html` is a
 * page to a browser. Nothing relcast runs rewrites the headers of an object
 * whose bytes are right, so the fix is a copy onto itself with new headers.
 * `cacheControl` undefined (no config): only Content-Type is compared.
 */
export function headerProblems(store: ObjectStore, seen: ReadonlyMap<string, ObjectMeta>, cacheControl: CacheControlSettings | undefined): string[] {
  // The folder store keeps no headers: it reports a Content-Type made from the name, and a static server derives both the same way.
  if (store.location.scheme === "file") return [];
  const groups = new Map<string, Mismatch>();
  const add = (header: string, has: string | undefined, wants: string | undefined, key: string) => {
    const id = JSON.stringify([header, has ?? null, wants]);
    const group = groups.get(id) ?? { header, has, wants, keys: [] };
    group.keys.push(key);
    groups.set(id, group);
  };
  for (const [key, meta] of [...seen].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    if (!isRelcasts(key)) continue;
    const type = contentTypeFor(key);
    if (meta.contentType !== type) add("Content-Type", meta.contentType, type, key);
    const cache = cacheControl && (isImmutable(key) ? cacheControl.immutable : cacheControl.mutable);
    if (cache !== undefined && meta.cacheControl !== cache) add("Cache-Control", meta.cacheControl, cache, key);
    for (const [name, value] of Object.entries(meta.foreignHeaders ?? {})) add(name, value, undefined, key);
  }
  return [...groups.values()].map(({ header, has, wants, keys }) => {
    const named = keys.slice(0, 4).map((k) => store.uriFor(k)).join(", ") + (keys.length > 4 ? ` and ${keys.length - 4} more` : "");
    const first = keys[0]!;
    const cache = cacheControl ? (isImmutable(first) ? cacheControl.immutable : cacheControl.mutable) : seen.get(first)!.cacheControl;
    const fix = headerFixCommand(store, first, { contentType: contentTypeFor(first), cacheControl: cache });
    const why = header === "Cache-Control" && has !== undefined && /immutable/.test(has) && wants !== has
      ? " (a CDN and Sparkle may keep an immutable copy for its max-age: invalidate it after the fix)"
      : "";
    return `${named} ${keys.length === 1 ? "is" : "are"} served with ${header} ${has === undefined ? "(none)" : JSON.stringify(has)}; relcast writes ${wants === undefined ? "none" : JSON.stringify(wants)}${why}${harm(header)}. `
      + `No relcast command rewrites the headers of an object whose bytes are right (it may be another run's): copy ${keys.length === 1 ? "it" : "each"} onto itself with relcast's headers only, e.g. ${fix}`;
  });
}
