import type { IncomingHttpHeaders } from "node:http";
import type { CallerIdentity } from "./http/middleware.js";

/**
 * Header rules of the proxy. Credentials never reach the upstream; the
 * caller's identity does, in `X-Relcast-*` headers that clients cannot
 * forge (any they send are dropped first).
 */
const HOP_BY_HOP = new Set([
  "connection",
  "keep-alive",
  "proxy-connection",
  "proxy-authenticate",
  "proxy-authorization",
  "te",
  "trailer",
  "transfer-encoding",
  "upgrade",
]);
const CREDENTIALS = ["authorization", "cookie"];
/** Set by the gateway from what it knows; a client's own values never pass (see forwarded-for.ts). */
const FORWARDING = ["x-forwarded-for", "x-forwarded-proto", "x-forwarded-host", "forwarded", "x-real-ip"];
/** Every request header never sent upstream as the caller sent it, in one set (one lookup per header on every proxied request). */
const NOT_FORWARDED = new Set([...HOP_BY_HOP, ...CREDENTIALS, ...FORWARDING]);
const IDENTITY_PREFIX = "x-relcast-";

const NONE = new Set<string>();

/** The header names a Connection header value lists (RFC 9110 §7.6.1). */
function connectionTokens(value: string | undefined): Set<string> {
  if (!value || value === "keep-alive" || value === "close") return NONE;
  return new Set(value.split(",").map((t) => t.trim().toLowerCase()).filter(Boolean));
}

/**
 * Headers as node's flat list, `[name, value, name, value, ...]`: what
 * `http.request` and `writeHead` write out as they are. Given an object
 * instead, `http.request` copies every header with `setHeader` into a
 * dictionary of its own before writing it, which cost more than any other
 * step of the proxy's header work (see docs/gateway.md, "Where the
 * gateway's time goes"). The bytes sent are the same: same names, values
 * and order.
 */
export type HeaderList = string[];

/** Appends `name: value` (each value of a repeated header as its own line, as node writes an array value). */
function append(out: HeaderList, name: string, value: string | readonly string[]): void {
  if (typeof value === "string") out.push(name, value);
  else for (const v of value) out.push(name, v);
}

/** Appends the caller's identity headers to `out` (in place: this runs on every proxied request). */
export function addIdentityHeaders(out: HeaderList, identity: CallerIdentity, product: string): HeaderList {
  out.push("x-relcast-product", product, "x-relcast-client", identity.clientId);
  if (identity.kind === "user") {
    out.push("x-relcast-auth", "bearer", "x-relcast-user", identity.username, "x-relcast-scope", identity.scopes.join(" "));
  } else {
    out.push("x-relcast-auth", "hmac", "x-relcast-company", identity.company);
  }
  return out;
}

/**
 * The request's headers as the upstream gets them: hop-by-hop headers,
 * credentials, forwarding headers and `x-relcast-*` dropped; the
 * forwarding headers the gateway vouches for, the upstream's Host and the
 * caller's identity added. `contentLength`, when given, replaces the
 * caller's Content-Length (a body the gateway read and forwards whole).
 */
export function upstreamRequestHeaders(
  incoming: IncomingHttpHeaders,
  identity: CallerIdentity,
  product: string,
  upstreamHost: string,
  forwarded: { for: string | undefined; proto: "http" | "https" },
  contentLength?: number,
): HeaderList {
  const dropped = connectionTokens(incoming.connection);
  const out: HeaderList = [];
  let hostSent = false;
  let lengthSent = contentLength === undefined;
  for (const name in incoming) {
    const value = incoming[name];
    if (value === undefined || NOT_FORWARDED.has(name) || dropped.has(name) || name.startsWith(IDENTITY_PREFIX)) continue;
    // Host and a replaced Content-Length keep their place in the list.
    if (name === "host") {
      out.push(name, upstreamHost);
      hostSent = true;
    } else if (name === "content-length" && contentLength !== undefined) {
      out.push(name, String(contentLength));
      lengthSent = true;
    } else {
      append(out, name, value);
    }
  }
  if (forwarded.for) out.push("x-forwarded-for", forwarded.for);
  out.push("x-forwarded-proto", forwarded.proto);
  if (incoming.host) out.push("x-forwarded-host", incoming.host);
  if (!hostSent) out.push("host", upstreamHost);
  addIdentityHeaders(out, identity, product);
  if (!lengthSent) out.push("content-length", String(contentLength));
  // A body streamed without a length (the caller's chunked framing, dropped above as hop-by-hop) goes upstream
  // chunked too, whatever the method: node chunks a GET's or DELETE's body only when told, and otherwise writes
  // its bytes after the head unframed, where the upstream would read them as a request of their own.
  else if (contentLength === undefined && incoming["transfer-encoding"] !== undefined && incoming["content-length"] === undefined) {
    out.push("transfer-encoding", "chunked");
  }
  return out;
}

/**
 * The upstream's response headers as the caller gets them, from node's raw
 * list (names as the upstream spelled them, repeated headers as repeated
 * lines): hop-by-hop headers and those its Connection header names dropped.
 * Reading the raw list spares node building the response's header object,
 * which nothing else here needs.
 */
export function downstreamResponseHeaders(raw: readonly string[]): HeaderList {
  // Every Connection line, joined as node would join them.
  let connection: string | undefined;
  for (let i = 0; i < raw.length; i += 2) {
    if (raw[i]!.length === 10 && raw[i]!.toLowerCase() === "connection") connection = connection === undefined ? raw[i + 1] : `${connection}, ${raw[i + 1]}`;
  }
  const dropped = connectionTokens(connection);
  const out: HeaderList = [];
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!.toLowerCase();
    if (HOP_BY_HOP.has(name) || dropped.has(name)) continue;
    out.push(raw[i]!, raw[i + 1]!);
  }
  return out;
}
