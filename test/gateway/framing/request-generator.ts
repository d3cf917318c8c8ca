import { Prng } from "./prng.js";
import type { Credential, Framing, InnerRequest, Payload, Product, RequestSpec } from "./request-model.js";

/**
 * Random requests for the framing property test: every method, credentials
 * of each kind and scope, Connection lists that name framing, credential,
 * identity and hop-by-hop headers in any case and with odd separators, every
 * Content-Length / Transfer-Encoding combination, bodies that are themselves
 * requests carrying a forged identity, forged identity headers in many
 * spellings, and method/URL override headers. Weighted so that about half
 * of them are requests the gateway should forward.
 */
export const METHODS = ["GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS"] as const;

/** What a Connection header may name: each framing and credential header the gateway must refuse there, and others. */
export const REFUSED_IN_CONNECTION = ["content-length", "transfer-encoding", "host", "authorization", "date", "digest"] as const;
const CONNECTION_TOKENS: readonly (readonly [number, string])[] = [
  [4, "content-length"],
  [2, "transfer-encoding"],
  [1, "host"],
  [1, "authorization"],
  [1, "date"],
  [1, "digest"],
  [4, "keep-alive"],
  [0.5, "close"],
  [1, "x-relcast-user"],
  [0.5, "x-relcast-scope"],
  [0.5, "x_relcast_company"],
  [1, "te"],
  [0.5, "upgrade"],
  [0.5, "x-trace"],
  [0.5, "cookie"],
];
const SEPARATORS = [", ", ",", " , ", ",\t", "\t,", ",, ", " ,,", ", ,"];

/** The gateway's identity headers, and spellings a caller might forge them in. */
const IDENTITY_NAMES = ["x-relcast-user", "x-relcast-scope", "x-relcast-company", "x-relcast-auth", "x-relcast-client", "x-relcast-product"];
const FORGED_VALUES: Record<string, string[]> = {
  "x-relcast-user": ["admin", "alice", "bob"],
  "x-relcast-scope": ["crm billing hr", "admin", "crm"],
  "x-relcast-company": ["globex", "acme"],
  "x-relcast-auth": ["hmac", "bearer", "internal"],
  "x-relcast-client": ["hmac-crm-acme", "app-one", "root"],
  "x-relcast-product": ["hr", "crm"],
};
/** Method and URL override headers some frameworks honour. */
export const OVERRIDE_NAMES = ["x-http-method-override", "x-http-method", "x-method-override", "x-original-url", "x-rewrite-url"];

export interface ConnectionPlan {
  index: number;
  requests: RequestSpec[];
  /** How the requests are written: each group in one write (pipelined), the next group after the answers to this one. */
  groups: number[][];
  /** Whether each write is split in two at a random byte (with a turn of the event loop between). */
  splitAt: number[];
  /** Per group: written this many ms after the previous write without waiting for answers, or -1. */
  delayMs: number[];
}

export function generateConnection(rng: Prng, index: number): ConnectionPlan {
  const count = rng.weighted([
    [3, 1],
    [3, 2],
    [3, 3],
    [2, 4],
    [2, 6],
    [1, 8],
  ] as const);
  const requests = Array.from({ length: count }, () => generateRequest(rng));
  const groups: number[][] = [];
  for (let i = 0; i < count; ) {
    const size = rng.chance(0.5) ? 1 : rng.int(2, Math.max(2, count - i));
    groups.push(Array.from({ length: Math.min(size, count - i) }, (_, k) => i + k));
    i += size;
  }
  const splitAt = groups.map(() => (rng.chance(0.25) ? rng.next() : -1));
  // Now and then a group goes while the requests before it are still in flight.
  const delayMs = groups.map((_, k) => (k > 0 && rng.chance(0.15) ? rng.int(1, 8) : -1));
  return { index, requests, groups, splitAt, delayMs };
}

export function generateRequest(rng: Prng): RequestSpec {
  const method = rng.pick(METHODS);
  const product: Product = rng.weighted([
    [5, "crm"],
    [4, "billing"],
    [1, "hr"],
  ] as const);
  const payload = generatePayload(rng);
  return {
    method,
    product,
    slow: rng.chance(0.1),
    query: rng.chance(0.2) ? "?q=1&r=two" : "",
    credential: generateCredential(rng),
    connection: connectionLines(rng),
    framing: generateFraming(rng, payload),
    payload,
    extra: generateExtra(rng),
    order: rng.int(1, 2 ** 31),
    ...(rng.chance(0.04) ? { version: "1.0" as const } : {}),
  };
}

function generateCredential(rng: Prng): Credential {
  return rng.weighted<Credential>([
    [3, { kind: "bearer", token: "crm" }],
    [3, { kind: "bearer", token: "billing-read" }],
    [2, { kind: "bearer", token: "all" }],
    [3, { kind: "hmac", key: "crm" }],
    [2, { kind: "hmac", key: "billing" }],
    [1, { kind: "bearer", token: "bogus" }],
    [1, { kind: "hmac", key: "wrong-secret" }],
    [0.5, { kind: "hmac", key: "unknown-client" }],
    [1, { kind: "none" }],
  ]);
}

/** A Connection header line value: a list of tokens in any case, with odd whitespace and empty elements. */
function connectionList(rng: Prng): string {
  const n = rng.int(1, 3);
  const tokens: string[] = [];
  for (let i = 0; i < n; i++) {
    const token = rng.weighted(CONNECTION_TOKENS);
    tokens.push(rng.spell(token));
  }
  let value = tokens[0]!;
  for (const t of tokens.slice(1)) value += rng.pick(SEPARATORS) + t;
  if (rng.chance(0.1)) value = `, ${value}`;
  if (rng.chance(0.1)) value = `${value},`;
  return value;
}

function connectionLines(rng: Prng): string[] {
  return rng.weighted<() => string[]>([
    [7, () => []],
    [4, () => [rng.spell("keep-alive")]],
    [1, () => ["close"]],
    [8, () => [connectionList(rng)]],
    [1, () => [connectionList(rng), connectionList(rng)]],
  ])();
}

function innerRequest(rng: Prng): InnerRequest {
  const headers: [string, string][] = [];
  for (const name of ["x-relcast-user", "x-relcast-scope", "x-relcast-auth"]) {
    if (rng.chance(0.8)) headers.push([rng.spell(name), FORGED_VALUES[name]![0]!]);
  }
  if (rng.chance(0.3)) headers.push(["X-Relcast-Company", "globex"]);
  return { method: rng.pick(["DELETE", "GET", "POST", "PUT"]), slow: rng.chance(0.4), headers, body: rng.chance(0.3) ? '{"role":"admin"}' : "" };
}

function generatePayload(rng: Prng): Payload {
  return rng.weighted<() => Payload>([
    [4, () => ({ kind: "empty" })],
    [3, () => ({ kind: "text", text: rng.pick(["hello {marker}", '{"n":1,"marker":"{marker}"}', "a=1&b=2", "x".repeat(rng.int(1, 300))]) })],
    [4, () => ({ kind: "smuggle", inner: Array.from({ length: rng.int(1, 2) }, () => innerRequest(rng)), trailing: rng.chance(0.2) ? "GET / HTTP/1.1\r\n" : "" })],
  ])();
}

function generateFraming(rng: Prng, payload: Payload): Framing {
  const te = () => rng.weighted([
    [6, "chunked"],
    [1, "Chunked"],
    [1, "CHUNKED"],
    [1, "gzip, chunked"],
  ] as const);
  const chunked = (badSize?: string): Framing => ({
    kind: "chunked",
    name: rng.spell("transfer-encoding"),
    te: te(),
    chunks: rng.int(1, 3),
    extension: rng.chance(0.25),
    trailer: rng.chance(0.15),
    ...(badSize !== undefined ? { badSize } : {}),
  });
  const length = (value?: string, twice?: boolean): Framing => ({
    kind: "content-length",
    name: rng.spell("content-length"),
    ...(value !== undefined ? { value } : {}),
    ...(twice ? { twice } : {}),
  });
  if (payload.kind === "empty") {
    return rng.weighted<() => Framing>([
      [5, () => ({ kind: "none" })],
      [3, () => length("0")],
      [2, () => chunked()],
      [0.5, () => length("00")],
    ])();
  }
  return rng.weighted<() => Framing>([
    [6, () => length()],
    [4, () => chunked()],
    [0.7, () => ({ kind: "both", te: te() })],
    [0.7, () => chunked(rng.pick(["zz", "-3", "0x3", "fffffffffffffffff1", "+3"]))],
    [0.5, () => length(undefined, true)],
    [0.4, () => ({ kind: "te-not-chunked", te: rng.pick(["identity", "gzip", "chunked, gzip"]) })],
  ])();
}

function generateExtra(rng: Prng): [string, string][] {
  const extra: [string, string][] = [];
  if (rng.chance(0.35)) {
    for (let i = rng.int(1, 3); i > 0; i--) {
      const name = rng.pick(IDENTITY_NAMES);
      const spelled = rng.chance(0.5) ? rng.spell(name).replaceAll("-", "_") : rng.spell(name);
      extra.push([spelled, rng.pick(FORGED_VALUES[name]!)]);
    }
  }
  if (rng.chance(0.2)) {
    const name = rng.pick(OVERRIDE_NAMES);
    const spelled = rng.chance(0.4) ? rng.spell(name).replaceAll("-", "_") : rng.spell(name);
    extra.push([spelled, name.endsWith("url") ? "/v1/admin/smuggled/{marker}/override" : rng.pick(["DELETE", "PUT", "PATCH"])]);
  }
  if (rng.chance(0.15)) extra.push(["TE", "trailers"]);
  if (rng.chance(0.05)) extra.push(["Upgrade", "h2c"]);
  if (rng.chance(0.1)) extra.push(["Keep-Alive", "timeout=5"]);
  if (rng.chance(0.1)) extra.push(["X-Trace", "t-{marker}"]);
  if (rng.chance(0.1)) extra.push(["Cookie", "session=abc"]);
  if (rng.chance(0.05)) extra.push(["Expect", "100-continue"]);
  return extra;
}

/**
 * The cases issue 34 reports, sent first whatever the seed: the smuggling
 * through `Connection: keep-alive, content-length` (a read-only Bearer GET
 * whose body is a DELETE as `admin`, once answered at once and once slow),
 * the underscore spelling of an identity header, the override headers, a
 * valid request pipelined behind one the gateway must refuse, and bytes
 * that arrive (unparseable, or after `Connection: close`) while a request
 * is at the upstream.
 */
export function anchorConnections(): ConnectionPlan[] {
  const base: RequestSpec = {
    method: "GET",
    product: "billing",
    slow: false,
    query: "",
    credential: { kind: "bearer", token: "billing-read" },
    connection: [],
    framing: { kind: "none" },
    payload: { kind: "empty" },
    extra: [],
    order: 1,
  };
  const admin: [string, string][] = [["X-Relcast-User", "admin"], ["X-Relcast-Scope", "billing crm hr"]];
  const smuggling = (slow: boolean): RequestSpec => ({
    ...base,
    connection: ["keep-alive, content-length"],
    framing: { kind: "content-length", name: "Content-Length" },
    payload: { kind: "smuggle", inner: [{ method: "DELETE", slow, headers: admin, body: "" }], trailing: "" },
  });
  const single = (spec: RequestSpec) => ({ requests: [spec], groups: [[0]], splitAt: [-1], delayMs: [-1] });
  const slowGet: RequestSpec = { ...base, slow: true };
  const badChunk: RequestSpec = {
    ...base,
    method: "POST",
    framing: { kind: "chunked", name: "Transfer-Encoding", te: "chunked", chunks: 1, extension: false, trailer: false, badSize: "zz" },
    payload: { kind: "text", text: "abc" },
  };
  const plans = [
    single(smuggling(false)),
    { requests: [smuggling(true), base, base], groups: [[0], [1], [2]], splitAt: [-1, -1, -1], delayMs: [-1, -1, -1] },
    single({ ...base, product: "crm", credential: { kind: "hmac", key: "crm" }, extra: [["X_Relcast_Company", "globex"]] }),
    single({ ...base, extra: [["X-HTTP-Method-Override", "DELETE"], ["X-Original-URL", "/v1/admin/smuggled/{marker}/o"], ["x_rewrite_url", "/v1/admin/smuggled/{marker}/r"]] }),
    { requests: [{ ...smuggling(false), connection: ["content-length"] }, base], groups: [[0, 1]], splitAt: [-1], delayMs: [-1] },
    // Bytes node cannot parse arriving while a request is at the upstream: its answer must still be the one the caller gets.
    { requests: [slowGet, badChunk], groups: [[0], [1]], splitAt: [-1, -1], delayMs: [-1, 5] },
    { requests: [{ ...slowGet, connection: ["close"] }, base], groups: [[0], [1]], splitAt: [-1, -1], delayMs: [-1, 5] },
  ];
  return plans.map((p, index) => ({ index, ...p }));
}
