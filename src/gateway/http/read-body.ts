import type { Context } from "hono";
import { bodyLimit } from "hono/body-limit";
import type { IncomingMessage } from "node:http";
import { HttpError } from "./http-error.js";
import type { GatewayEnv } from "./middleware.js";

/**
 * Reads a small request body (forms, token requests, HMAC Digest) into
 * memory with hono's body limit: refused by Content-Length before reading,
 * or while reading a chunked body, as soon as it passes `limit` bytes.
 * The refusal is an HttpError 413 the caller may translate.
 */
export async function readBoundedBody(c: Context<GatewayEnv>, limit: number): Promise<Buffer> {
  let body: Buffer | undefined;
  const limiter = bodyLimit({
    maxSize: limit,
    onError: () => {
      throw tooLarge(limit);
    },
  });
  await limiter(c, async () => {
    body = Buffer.from(await c.req.arrayBuffer());
  });
  return body ?? Buffer.alloc(0);
}

function tooLarge(limit: number): HttpError {
  return new HttpError(413, "request_too_large", `request body exceeds ${limit} bytes`, { connection: "close" });
}

/** True when the request announces a body (RFC 9112 §6.3). */
export function hasBody(req: IncomingMessage): boolean {
  return req.headers["transfer-encoding"] !== undefined || (req.headers["content-length"] !== undefined && req.headers["content-length"] !== "0");
}
