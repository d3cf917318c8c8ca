import type { IncomingHttpHeaders } from "node:http";
import type { CallerIdentity } from "./http/middleware.js";
import { comparableName } from "./header-names.js";

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
/** Framing is the gateway's own (see upstreamFraming): never the caller's header lines. Host is the upstream's. */
const FRAMING = ["content-length", "transfer-encoding", "host"];
const CREDENTIALS = ["authorization", "cookie"];
/**
 * Headers by which an upstream (or a framework in front of it) would take
 * another method or target than the one the gateway checked, and which no
 * signature covers: method overrides (Rails, Symfony, Express
 * method-override, ASP.NET) and URL rewrites (IIS, Symfony).
 */
const OVERRIDES = [
  "x-http-method-override",
  "x-http-method",
  "x-method-override",
  "x-original-method",
  "x-original-url",
  "x-original-uri",
  "x-rewrite-url",
  "x-method",
  "x-original-host",
  "x-host",
  "x-envoy-original-path",
];
/** Set by the gateway from what it knows; a client's own values never pass (see forwarded-for.ts). `x-forwarded-*` goes as a prefix. */
const FORWARDING = ["forwarded", "x-real-ip", "x-client-ip", "true-client-ip", "x-cluster-client-ip", "client-ip", "x-proxyuser-ip", "remote-user", "x-remote-user"];
/** Every request header never sent upstream as the caller sent it, in one set (one lookup per header on every proxied request). */
const NOT_FORWARDED = new Set([...HOP_BY_HOP, ...FRAMING, ...CREDENTIALS, ...OVERRIDES, ...FORWARDING]);
/** Prefixes of header names only the gateway sets: its identity headers and the forwarding family. */
const IDENTITY_PREFIX = "x-relcast-";
const FORWARDED_PREFIX = "x-forwarded-";

const NONE = new Set<string>();

/** The header names a Connection header value lists (RFC 9110 §7.6.1), lower-cased, `_` read as `-`. */
function connectionTokens(value: string | undefined): Set<string> {
  if (!value || value === "keep-alive" || value === "close") return NONE;
  return new Set(value.split(",").map((t) => comparableName(t.trim().toLowerCase())).filter(Boolean));
}


/** Whether the caller's header `name` (lower case, as node gives it) is never forwarded. */
function isDropped(name: string, dropped: Set<string>): boolean {
  const comparable = comparableName(name);
  return NOT_FORWARDED.has(comparable) || dropped.has(comparable) || comparable.startsWith(IDENTITY_PREFIX) || comparable.startsWith(FORWARDED_PREFIX);
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
 * How the upstream request's body is framed, from what the gateway parsed
 * and nothing else: `none` (node's parser found no body: the request ends
 * after its head), the length of a body the gateway read whole or of the
 * one node's parser framed by Content-Length, or `chunked` for a body node
 * read chunked. The caller's framing header lines are never copied: a
 * `Connection` list could remove them (RFC 9110 lets a sender name any
 * header there), and then the body went upstream unframed, where the
 * upstream read it as a request of its own.
 */
export type UpstreamFraming = { kind: "none" } | { kind: "length"; length: number } | { kind: "chunked" };

export function upstreamFraming(incoming: IncomingHttpHeaders, readBody: Buffer | undefined): UpstreamFraming {
  if (readBody) return { kind: "length", length: readBody.length };
  // node's parser refuses a request with both headers, or with a Content-Length that is not one decimal number.
  if (incoming["transfer-encoding"] !== undefined) return { kind: "chunked" };
  const length = incoming["content-length"] === undefined ? 0 : Number(incoming["content-length"]);
  return length === 0 ? { kind: "none" } : { kind: "length", length };
}

/**
 * The request's headers as the upstream gets them: hop-by-hop headers,
 * those the caller's Connection header names, framing, credentials,
 * forwarding and override headers and every `x-relcast-*` dropped (names
 * compared case-blind with `_` read as `-`); the forwarding headers the
 * gateway vouches for, the upstream's Host, the caller's identity and the
 * gateway's own framing added.
 */
export function upstreamRequestHeaders(
  incoming: IncomingHttpHeaders,
  identity: CallerIdentity,
  product: string,
  upstreamHost: string,
  forwarded: { for: string | undefined; proto: "http" | "https" },
  framing: UpstreamFraming,
): HeaderList {
  const dropped = connectionTokens(incoming.connection);
  const out: HeaderList = ["host", upstreamHost];
  for (const name in incoming) {
    const value = incoming[name];
    if (value === undefined || isDropped(name, dropped)) continue;
    append(out, name, value);
  }
  if (forwarded.for) out.push("x-forwarded-for", forwarded.for);
  out.push("x-forwarded-proto", forwarded.proto);
  if (incoming.host) out.push("x-forwarded-host", incoming.host);
  addIdentityHeaders(out, identity, product);
  if (framing.kind === "length") out.push("content-length", String(framing.length));
  else if (framing.kind === "chunked") out.push("transfer-encoding", "chunked");
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
