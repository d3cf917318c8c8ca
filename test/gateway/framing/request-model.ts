import { signRequest } from "../../../src/hmac/index.js";
import { HMAC_CRED, HMAC_OTHER } from "../harness.js";
import { SLOW_SEGMENT } from "./recording-upstream.js";
import { Prng } from "./prng.js";

/**
 * One generated request as data (so it can be shrunk and sent again under a
 * new marker) and its rendering to the exact bytes sent. Each request's
 * target carries a marker (`/v1/t/<marker>`), and a request hidden in its
 * body carries the same marker under `/v1/admin/smuggled/<marker>/<n>`, so
 * every request the upstream records can be traced to the bytes that
 * carried it.
 */
export type Product = "crm" | "billing" | "hr";
export type TokenName = "crm" | "billing-read" | "all";

export type Credential =
  | { kind: "bearer"; token: TokenName | "bogus" }
  | { kind: "hmac"; key: "crm" | "billing" | "wrong-secret" | "unknown-client" }
  | { kind: "none" };

export type Framing =
  /** No Content-Length, no Transfer-Encoding: no body is sent. */
  | { kind: "none" }
  /** `value` replaces the true length as text (`05`, `0`); the true length otherwise. */
  | { kind: "content-length"; name: string; value?: string; twice?: boolean }
  | { kind: "chunked"; name: string; te: string; chunks: number; extension: boolean; trailer: boolean; badSize?: string }
  /** Content-Length and chunked together (RFC 9112 §6.1: a sender must not; a server must refuse or drop Content-Length). */
  | { kind: "both"; te: string }
  /** A Transfer-Encoding whose last coding is not chunked (no way to find the body's end). */
  | { kind: "te-not-chunked"; te: string };

export interface InnerRequest {
  method: string;
  slow: boolean;
  /** Header lines of the hidden request, e.g. a forged identity. */
  headers: [string, string][];
  body: string;
}

export type Payload = { kind: "empty" } | { kind: "text"; text: string } | { kind: "smuggle"; inner: InnerRequest[]; trailing: string };

export interface RequestSpec {
  method: string;
  product: Product;
  slow: boolean;
  query: string;
  credential: Credential;
  /** Each a Connection header line, as sent. */
  connection: string[];
  framing: Framing;
  payload: Payload;
  /** Other header lines; `{marker}` in a value becomes the request's marker. */
  extra: [string, string][];
  /** Seed of the header order (Host stays first). */
  order: number;
  /** HTTP/1.1 unless set. */
  version?: "1.0";
}

export interface RenderContext {
  gatewayHost: string;
  tokens: Record<TokenName, string>;
  /** The gateway's clock, for HMAC Date headers. */
  date: Date;
}

export interface RenderedRequest {
  spec: RequestSpec;
  marker: string;
  method: string;
  target: string;
  /** The body bytes as framed (what a faithful gateway forwards). */
  body: Buffer;
  bytes: Buffer;
}

export const MARKER = /\/t\/([a-z]+\d+r\d+)(?=[/?]|$)/;
export const SMUGGLED_MARKER = /\/smuggled\/([a-z]+\d+r\d+)\//;

export function targetOf(spec: RequestSpec, marker: string): string {
  return `/v2/${spec.product}/v1/t/${marker}${spec.slow ? SLOW_SEGMENT : ""}${spec.query}`;
}

export function payloadBytes(spec: RequestSpec, marker: string): Buffer {
  const { payload } = spec;
  if (payload.kind === "empty") return Buffer.alloc(0);
  if (payload.kind === "text") return Buffer.from(payload.text.replaceAll("{marker}", marker), "latin1");
  const inner = payload.inner.map((r, i) => {
    const lines = [`${r.method} /v1/admin/smuggled/${marker}/${i}${r.slow ? SLOW_SEGMENT : ""} HTTP/1.1`, "Host: upstream.internal"];
    for (const [n, v] of r.headers) lines.push(`${n}: ${v}`);
    lines.push(`Content-Length: ${Buffer.byteLength(r.body, "latin1")}`);
    return `${lines.join("\r\n")}\r\n\r\n${r.body}`;
  });
  return Buffer.from(inner.join("") + payload.trailing, "latin1");
}

/** The body actually sent: none when the framing announces none. */
function sentBody(spec: RequestSpec, marker: string): Buffer {
  return spec.framing.kind === "none" ? Buffer.alloc(0) : payloadBytes(spec, marker);
}

function chunkedBytes(framing: Extract<Framing, { kind: "chunked" }>, body: Buffer): string {
  const parts: string[] = [];
  const n = body.length === 0 ? 0 : Math.min(framing.chunks, body.length);
  let at = 0;
  for (let i = 0; i < n; i++) {
    const end = i === n - 1 ? body.length : at + Math.ceil((body.length - at) / (n - i));
    const size = i === 0 && framing.badSize !== undefined ? framing.badSize : (end - at).toString(16);
    parts.push(`${size}${framing.extension ? `;ext${i}="a b";x` : ""}\r\n${body.subarray(at, end).toString("latin1")}\r\n`);
    at = end;
  }
  if (n === 0 && framing.badSize !== undefined) parts.push(`${framing.badSize}\r\n`);
  parts.push(`0${framing.extension ? ";last" : ""}\r\n`);
  if (framing.trailer) parts.push("X-Trailer: t\r\n");
  parts.push("\r\n");
  return parts.join("");
}

function credentialHeaders(spec: RequestSpec, target: string, body: Buffer, ctx: RenderContext): [string, string][] {
  const { credential } = spec;
  if (credential.kind === "none") return [];
  if (credential.kind === "bearer") {
    return [["Authorization", `Bearer ${credential.token === "bogus" ? "rca_bogus0000000000000000000000000000" : ctx.tokens[credential.token]}`]];
  }
  const key = credential.key === "billing" ? HMAC_OTHER : HMAC_CRED;
  const signed = signRequest({
    clientId: credential.key === "unknown-client" ? "hmac-nobody" : key.id,
    secret: credential.key === "wrong-secret" ? "not-the-secret-of-this-client" : key.secret,
    method: spec.method,
    url: target,
    ...(body.length > 0 ? { body } : {}),
    date: ctx.date,
  });
  return Object.entries(signed.headers).filter((e): e is [string, string] => e[1] !== undefined);
}

function framingHeaders(spec: RequestSpec, body: Buffer): [string, string][] {
  const f = spec.framing;
  switch (f.kind) {
    case "none":
      return [];
    case "content-length": {
      const line: [string, string] = [f.name, f.value ?? String(body.length)];
      return f.twice ? [line, line] : [line];
    }
    case "chunked":
      return [[f.name, f.te]];
    case "both":
      return [["Content-Length", String(body.length)], ["Transfer-Encoding", f.te]];
    case "te-not-chunked":
      return [["Transfer-Encoding", f.te], ["Content-Length", String(body.length)]];
  }
}

function bodyOnWire(spec: RequestSpec, body: Buffer): string {
  const f = spec.framing;
  if (f.kind === "chunked") return chunkedBytes(f, body);
  if (f.kind === "both") return chunkedBytes({ kind: "chunked", name: "", te: f.te, chunks: 1, extension: false, trailer: false }, body);
  return body.toString("latin1");
}

export function renderRequest(spec: RequestSpec, marker: string, ctx: RenderContext): RenderedRequest {
  const target = targetOf(spec, marker);
  const body = sentBody(spec, marker);
  const lines: [string, string][] = [
    ...credentialHeaders(spec, target, body, ctx),
    ...spec.connection.map((v): [string, string] => ["Connection", v]),
    ...framingHeaders(spec, body),
    ...spec.extra.map(([n, v]): [string, string] => [n, v.replaceAll("{marker}", marker)]),
  ];
  const ordered = new Prng(spec.order).shuffle(lines);
  const head = [`${spec.method} ${target} HTTP/${spec.version ?? "1.1"}`, `Host: ${ctx.gatewayHost}`, ...ordered.map(([n, v]) => `${n}: ${v}`)].join("\r\n");
  const bytes = Buffer.from(`${head}\r\n\r\n${bodyOnWire(spec, body)}`, "latin1");
  return { spec, marker, method: spec.method, target, body, bytes };
}

/** The request's bytes for a failure message, with the bearer tokens named instead of shown. */
export function showRequest(bytes: Buffer, ctx: RenderContext): string {
  let text = bytes.toString("latin1");
  for (const [name, token] of Object.entries(ctx.tokens)) text = text.replaceAll(token, `<token with scope ${name}>`);
  return JSON.stringify(text);
}
