import type { IncomingHttpHeaders, OutgoingHttpHeaders } from "node:http";
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
const CREDENTIALS = new Set(["authorization", "cookie"]);
/** Set by the gateway from what it knows; a client's own values never pass (see forwarded-for.ts). */
const FORWARDING = new Set(["x-forwarded-for", "x-forwarded-proto", "x-forwarded-host", "forwarded", "x-real-ip"]);
const IDENTITY_PREFIX = "x-relcast-";

const NONE = new Set<string>();

function connectionTokens(headers: IncomingHttpHeaders): Set<string> {
  const value = headers.connection;
  if (!value || value === "keep-alive" || value === "close") return NONE;
  return new Set(value.split(",").map((t) => t.trim().toLowerCase()).filter(Boolean));
}

/** Adds the caller's identity headers to `out` (in place: this runs on every proxied request). */
export function addIdentityHeaders(out: OutgoingHttpHeaders, identity: CallerIdentity, product: string): OutgoingHttpHeaders {
  out["x-relcast-product"] = product;
  out["x-relcast-client"] = identity.clientId;
  if (identity.kind === "user") {
    out["x-relcast-auth"] = "bearer";
    out["x-relcast-user"] = identity.username;
    out["x-relcast-scope"] = identity.scopes.join(" ");
  } else {
    out["x-relcast-auth"] = "hmac";
    out["x-relcast-company"] = identity.company;
  }
  return out;
}

export function upstreamRequestHeaders(
  incoming: IncomingHttpHeaders,
  identity: CallerIdentity,
  product: string,
  upstreamHost: string,
  forwarded: { for: string | undefined; proto: "http" | "https" },
): OutgoingHttpHeaders {
  const dropped = connectionTokens(incoming);
  const out: OutgoingHttpHeaders = {};
  for (const name in incoming) {
    const value = incoming[name];
    if (value === undefined || HOP_BY_HOP.has(name) || CREDENTIALS.has(name) || FORWARDING.has(name) || dropped.has(name) || name.startsWith(IDENTITY_PREFIX)) continue;
    out[name] = value;
  }
  if (forwarded.for) out["x-forwarded-for"] = forwarded.for;
  out["x-forwarded-proto"] = forwarded.proto;
  if (incoming.host) out["x-forwarded-host"] = incoming.host;
  out.host = upstreamHost;
  return addIdentityHeaders(out, identity, product);
}

export function downstreamResponseHeaders(incoming: IncomingHttpHeaders): OutgoingHttpHeaders {
  const dropped = connectionTokens(incoming);
  const out: OutgoingHttpHeaders = {};
  for (const name in incoming) {
    const value = incoming[name];
    if (value === undefined || HOP_BY_HOP.has(name) || dropped.has(name)) continue;
    out[name] = value;
  }
  return out;
}
