import type { Context } from "hono";
import type { GatewayEnv } from "./middleware.js";

/**
 * The responses the gateway makes itself, as hono responses. The security
 * headers of the HTML pages come from hono's secureHeaders middleware
 * (server.ts); these add only what belongs to each kind of answer.
 */
type Headers = Record<string, string | string[]>;

export function jsonResponse(c: Context<GatewayEnv>, status: number, body: unknown, headers: Headers = {}): Response {
  for (const [name, value] of Object.entries(headers)) setHeader(c, name, value);
  return c.json(body, status as 200);
}

/** HTML pages are never cached: they carry a one-time form. */
export function htmlResponse(c: Context<GatewayEnv>, status: number, html: string, headers: Headers = {}): Response {
  setHeader(c, "cache-control", "no-store");
  setHeader(c, "pragma", "no-cache");
  for (const [name, value] of Object.entries(headers)) setHeader(c, name, value);
  return c.html(html, status as 200);
}

/** 303 after a form POST, so the browser follows with GET. */
export function redirectResponse(c: Context<GatewayEnv>, location: string): Response {
  setHeader(c, "cache-control", "no-store");
  setHeader(c, "referrer-policy", "no-referrer");
  return c.redirect(location, 303);
}

function setHeader(c: Context<GatewayEnv>, name: string, value: string | string[]): void {
  if (Array.isArray(value)) {
    c.header(name, undefined);
    for (const v of value) c.header(name, v, { append: true });
  } else c.header(name, value);
}

