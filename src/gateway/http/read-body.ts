import type { IncomingMessage } from "node:http";
import { HttpError } from "./http-error.js";

/**
 * Reads a request body into memory, refusing (413) as soon as it passes
 * `limit` bytes: by Content-Length before reading, or while reading for
 * chunked bodies. Only for small bodies (forms, token requests, HMAC Digest).
 */
export async function readBoundedBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  const declared = req.headers["content-length"];
  if (declared !== undefined && Number(declared) > limit) {
    req.resume();
    throw tooLarge(limit);
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    const buf = chunk as Buffer;
    size += buf.length;
    if (size > limit) {
      req.resume();
      throw tooLarge(limit);
    }
    chunks.push(buf);
  }
  return Buffer.concat(chunks, size);
}

function tooLarge(limit: number): HttpError {
  return new HttpError(413, "request_too_large", `request body exceeds ${limit} bytes`, { connection: "close" });
}

/** True when the request announces a body (RFC 9112 §6.3). */
export function hasBody(req: IncomingMessage): boolean {
  return req.headers["transfer-encoding"] !== undefined || (req.headers["content-length"] !== undefined && req.headers["content-length"] !== "0");
}
