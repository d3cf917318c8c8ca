import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { pipeline } from "node:stream/promises";
import { contentTypeFor } from "../../store/content-types.js";
import { derivedCacheControl } from "../cache-control.js";
import type { ObjectMeta, ObjectStore } from "../../store/object-store.js";
import { parseRange } from "./byte-range.js";
import { notModified, quotedEtag, rangeStillValid } from "./conditional.js";
import { keyForRequestTarget } from "./request-key.js";

function plain(res: ServerResponse, status: number, text: string, extra: Record<string, string> = {}): void {
  res.writeHead(status, { "content-type": "text/plain; charset=utf-8", "content-length": Buffer.byteLength(text + "\n"), "x-content-type-options": "nosniff", ...extra });
  res.end(res.req.method === "HEAD" ? undefined : text + "\n");
}

function baseHeaders(key: string, meta: ObjectMeta): Record<string, string> {
  return {
    "content-type": meta.contentType ?? contentTypeFor(key),
    "cache-control": meta.cacheControl ?? derivedCacheControl(key),
    etag: quotedEtag(meta.etag),
    "last-modified": meta.lastModified.toUTCString(),
    "accept-ranges": "bytes",
    "x-content-type-options": "nosniff",
  };
}

async function handle(store: ObjectStore, req: IncomingMessage, res: ServerResponse): Promise<void> {
  if (req.method !== "GET" && req.method !== "HEAD") return plain(res, 405, "method not allowed", { allow: "GET, HEAD" });
  const mapped = keyForRequestTarget(req.url ?? "");
  if (!mapped.ok) return plain(res, mapped.status, mapped.status === 404 ? "not found" : `bad request: ${mapped.reason}`);
  const meta = await store.head(mapped.key);
  if (!meta) return plain(res, 404, "not found");
  const headers = baseHeaders(mapped.key, meta);
  if (notModified(req.headers, meta)) {
    res.writeHead(304, headers);
    return void res.end();
  }
  const ifRange = req.headers["if-range"];
  const wanted = rangeStillValid(Array.isArray(ifRange) ? ifRange[0] : ifRange, meta) ? parseRange(req.headers.range, meta.size) : { kind: "full" as const };
  if (wanted.kind === "unsatisfiable") return plain(res, 416, "range not satisfiable", { "content-range": `bytes */${meta.size}` });
  const range = wanted.kind === "partial" ? wanted.range : undefined;
  const length = range ? range.end - range.start + 1 : meta.size;
  res.writeHead(range ? 206 : 200, { ...headers, "content-length": String(length), ...(range && { "content-range": `bytes ${range.start}-${range.end}/${meta.size}` }) });
  if (req.method === "HEAD" || length === 0) return void res.end();
  const got = await store.getStream(mapped.key, range);
  if (!got) return void res.destroy();
  await pipeline(got.stream, res);
}

/**
 * Serves the store's public keys over HTTP as a static host would: GET and
 * HEAD, ETag/Last-Modified, conditional GET, single byte ranges, and no
 * path that leaves the store.
 */
export function createSiteServer(store: ObjectStore, log: (line: string) => void = () => {}): Server {
  const server = createServer((req, res) => {
    handle(store, req, res).catch((err: NodeJS.ErrnoException) => {
      // A client that hangs up mid-download (or right after the last byte) is not an error.
      if (err.code === "ERR_STREAM_PREMATURE_CLOSE") return;
      log(`error serving ${req.url}: ${err.message}`);
      if (!res.headersSent) plain(res, 502, "the store could not be read");
      else res.destroy();
    });
  });
  server.headersTimeout = 10_000;
  server.requestTimeout = 30_000;
  return server;
}
