import { CLIENT, HMAC_CRED, HMAC_OTHER, USER } from "../harness.js";
import type { ConnectionRun } from "./connection-runner.js";
import { OVERRIDE_NAMES, REFUSED_IN_CONNECTION } from "./request-generator.js";
import { MARKER, SMUGGLED_MARKER, type RenderedRequest, type RequestSpec } from "./request-model.js";
import { UNPARSEABLE_HEADER, type UpstreamParseError, type UpstreamRecord } from "./recording-upstream.js";
import { headerValue, type Answer } from "./response-reader.js";

/**
 * The properties of issue 34, checked on what the callers got (answers per
 * connection, in order) and what the upstream recorded:
 * (a) the upstream sees at most one request per request the gateway
 *     accepted and answered with an upstream answer, with that request's
 *     method, target and body, and never a request the gateway did not
 *     accept (refused, unanswered, or hidden in a body);
 * (b) each upstream request carries exactly the gateway's identity headers
 *     for its credentials, and no caller-sent identity header (any case,
 *     `_` read as `-`), override header or credential;
 * (c) every answer belongs to the request it answers on its own connection;
 * (d) a Connection header naming a framing or credential header is refused
 *     with 400, and so is an HTTP/1.0 request with Transfer-Encoding (its
 *     framing is faulty: HTTP/1.0 has no chunked coding);
 * (e) every connection ends: each request answered, or the connection closed
 *     after an answer that says `Connection: close`.
 */
export type Property = "a" | "b" | "c" | "d" | "e";

export const PROPERTY_TEXT: Record<Property, string> = {
  a: "the upstream sees only requests the gateway accepted and answered, once each, as the caller sent them",
  b: "upstream requests carry exactly the gateway's identity headers and no caller-sent identity, override or credential header",
  c: "every answer reaches the caller and request it belongs to",
  d: "a Connection header naming content-length, transfer-encoding, host, authorization, date or digest, or Transfer-Encoding in an HTTP/1.0 request, is refused with 400",
  e: "every connection ends: each request answered, or the connection closed after an answer saying Connection: close",
};

export interface Violation {
  property: Property;
  /** A short name of the class, e.g. `smuggled-request`. */
  kind: string;
  detail: string;
  /** The caller's request involved, when there is one. */
  run?: ConnectionRun;
  index?: number;
  /** Another caller's request involved (whose answer this caller got). */
  related?: { run: ConnectionRun; index: number };
}

export interface Observation {
  runs: ConnectionRun[];
  records: readonly UpstreamRecord[];
  parseErrors: readonly UpstreamParseError[];
}

const IDENTITY_PREFIX = "x-relcast-";
const REFUSED = new Set<string>(REFUSED_IN_CONNECTION);
const OVERRIDES = new Set(OVERRIDE_NAMES);

/** A header name as an upstream framework may read it: case-blind, `_` as `-`. */
export function normalName(name: string): string {
  return name.toLowerCase().replaceAll("_", "-");
}

/** The identity headers the gateway must send for this request's credentials; undefined when they must not be accepted at all. */
export function expectedIdentity(spec: RequestSpec): Record<string, string> | undefined {
  const c = spec.credential;
  if (c.kind === "bearer" && c.token !== "bogus") {
    const scopes = { crm: ["crm"], "billing-read": ["billing:read"], all: ["billing", "crm"] }[c.token];
    return { "x-relcast-product": spec.product, "x-relcast-client": CLIENT.id, "x-relcast-auth": "bearer", "x-relcast-user": USER.name, "x-relcast-scope": scopes.join(" ") };
  }
  if (c.kind === "hmac" && (c.key === "crm" || c.key === "billing")) {
    const key = c.key === "crm" ? HMAC_CRED : HMAC_OTHER;
    return { "x-relcast-product": spec.product, "x-relcast-client": key.id, "x-relcast-auth": "hmac", "x-relcast-company": key.company };
  }
  return undefined;
}

/** The target the upstream must see: the product's base path, then the target without `/v2/<product>`. */
export function expectedUpstreamTarget(request: RenderedRequest): string {
  const rest = request.target.slice(`/v2/${request.spec.product}`.length);
  return request.spec.product === "billing" ? `/billing-base${rest}` : rest;
}

export function connectionTokens(spec: RequestSpec): string[] {
  return spec.connection.flatMap((line) => line.split(",")).map((t) => t.replace(/^[ \t]+|[ \t]+$/g, "").toLowerCase()).filter(Boolean);
}

export function upstreamId(answer: Answer): number | undefined {
  const id = headerValue(answer, "x-upstream-id");
  return id === undefined ? undefined : Number(id);
}

export function checkProperties(obs: Observation): Violation[] {
  const violations: Violation[] = [];
  const sent = new Map<string, { run: ConnectionRun; index: number }>();
  for (const run of obs.runs) run.requests.forEach((r, index) => sent.set(r.marker, { run, index }));
  const complete = obs.records.filter((r) => r.complete);
  const byId = new Map(obs.records.map((r) => [r.id, r]));
  const seen = new Map<string, UpstreamRecord[]>();

  // (a) what reached the upstream
  for (const record of complete) {
    const marker = MARKER.exec(record.url)?.[1];
    const carrier = SMUGGLED_MARKER.exec(record.url)?.[1];
    const origin = sent.get(marker ?? carrier ?? "");
    if (marker !== undefined && origin) {
      seen.set(marker, [...(seen.get(marker) ?? []), record]);
    } else if (carrier !== undefined && origin) {
      violations.push({ ...origin, property: "a", kind: "smuggled-request", detail: `the upstream executed ${record.method} ${record.url}, a request in the body of this one, with headers ${JSON.stringify(pairs(record.rawHeaders))}` });
    } else if (marker === undefined && carrier === undefined) {
      violations.push({ property: "a", kind: "unknown-request", detail: `the upstream executed ${record.method} ${record.url} that no caller sent as a request, headers ${JSON.stringify(pairs(record.rawHeaders))}` });
    }
  }
  for (const error of obs.parseErrors) {
    violations.push({ property: "a", kind: "upstream-unparseable", detail: `the upstream could not parse what the gateway sent (${error.code}): ${JSON.stringify(error.bytes.slice(0, 400))}` });
  }
  for (const [marker, records] of seen) {
    const { run, index } = sent.get(marker)!;
    const request = run.requests[index]!;
    const answer = run.answers[index];
    const at = { run, index };
    if (records.length > 1) violations.push({ ...at, property: "a", kind: "forwarded-twice", detail: `the upstream executed it ${records.length} times` });
    if (!answer) {
      violations.push({ ...at, property: "a", kind: "forwarded-unanswered", detail: "the upstream executed it, the caller got no answer (connection closed first)" });
    } else if (upstreamId(answer) === undefined) {
      const from =
        headerValue(answer, UNPARSEABLE_HEADER) !== undefined
          ? "the upstream's 400 to bytes it could not parse (sent after this request)"
          : isBareParseError(answer)
            ? "node's bare 400 to bytes it could not parse on this connection (sent behind this request), in place of this request's answer"
            : `${answer.status} from the gateway itself`;
      violations.push({ ...at, property: "a", kind: "refused-but-forwarded", detail: `the caller got ${from}, yet the upstream executed it` });
    }
    for (const record of records) {
      const target = expectedUpstreamTarget(request);
      if (record.method !== request.method || record.url !== target) {
        violations.push({ ...at, property: "a", kind: "request-altered", detail: `the upstream executed ${record.method} ${record.url} for ${request.method} ${target}` });
      } else if (!record.body.equals(request.body)) {
        violations.push({ ...at, property: "a", kind: "body-altered", detail: `the upstream got a body of ${record.body.length} bytes ${JSON.stringify(record.body.toString("latin1").slice(0, 120))}, the caller framed ${request.body.length} bytes` });
      }
      violations.push(...identityViolations(record, request).map((v) => ({ ...at, ...v })));
    }
  }

  for (const run of obs.runs) {
    // (c) answers in order, each the answer to its own request
    if (run.readerError) violations.push({ run, index: run.answers.length, property: "c", kind: "unreadable-answer", detail: run.readerError });
    run.answers.forEach((answer, index) => {
      const request = run.requests[index];
      if (!request) {
        violations.push({ run, index: run.requests.length - 1, property: "c", kind: "extra-answer", detail: `answer #${index + 1} on a connection that sent ${run.requests.length} requests: ${answer.head.split("\r\n")[0]}` });
        return;
      }
      if (headerValue(answer, UNPARSEABLE_HEADER) !== undefined) {
        violations.push({ run, index, property: "c", kind: "wrong-answer", detail: "the caller got the upstream's 400 to bytes it could not parse, not an answer to its request" });
        return;
      }
      const id = upstreamId(answer);
      if (id === undefined) return;
      const record = byId.get(id);
      const marker = record ? MARKER.exec(record.url)?.[1] : undefined;
      if (marker !== request.marker) {
        const whose = !record ? "an upstream request never recorded" : `the answer to ${record.method} ${record.url}${describeOrigin(record, sent, run)}`;
        const origin = record ? sent.get(MARKER.exec(record.url)?.[1] ?? SMUGGLED_MARKER.exec(record.url)?.[1] ?? "") : undefined;
        violations.push({ run, index, property: "c", kind: "wrong-answer", detail: `the caller got ${whose}`, ...(origin ? { related: origin } : {}) });
      }
    });
    // (d) Connection naming framing or credential headers
    run.answers.forEach((answer, index) => {
      const request = run.requests[index];
      if (!request) return;
      const named = connectionTokens(request.spec).filter((t) => REFUSED.has(t));
      if (named.length > 0 && answer.status !== 400) {
        violations.push({ run, index, property: "d", kind: "connection-not-refused", detail: `Connection names ${named.join(", ")}; the gateway answered ${answer.status}` });
      }
      if (request.spec.version === "1.0" && sendsTransferEncoding(request.spec) && answer.status !== 400) {
        violations.push({ run, index, property: "d", kind: "http10-transfer-encoding", detail: `an HTTP/1.0 request with Transfer-Encoding; the gateway answered ${answer.status}` });
      }
    });
    // (e)
    run.answers.forEach((answer, index) => {
      const request = run.requests[index];
      if (request && asksUpgrade(request.spec) && !announcesClose(answer)) {
        violations.push({ run, index, property: "e", kind: "upgrade-kept-open", detail: `the request asks to upgrade the connection, which ends it, yet the ${answer.status} answer did not say Connection: close` });
      }
    });
    if (run.stalled) violations.push({ run, index: run.answers.length, property: "e", kind: "stalled", detail: `no answer to request #${run.answers.length + 1} and the connection stayed open` });
    const last = run.answers[run.answers.length - 1];
    // A request that asks to upgrade the connection (the gateway upgrades nothing) ends it: its answer must say so.
    if (run.closedByGateway && run.answers.length < run.written && !(last && announcesClose(last))) {
      const after = last ? `after answering #${run.answers.length} with ${last.status} without Connection: close` : "before any answer";
      const how = run.reset ? "reset" : "closed";
      violations.push({ run, index: run.answers.length, property: "e", kind: "closed-unannounced", detail: `the gateway ${how} the connection ${after}, with request #${run.answers.length + 1} unanswered` });
    }
  }
  return violations;
}

/** node's own answer to a request it cannot parse (its default clientError handler), not the gateway's. */
function isBareParseError(answer: Answer): boolean {
  return answer.status === 400 && answer.headers.length === 1 && answer.body.length === 0;
}

/** Whether the request has a Transfer-Encoding header line node reads as one (its name in any case; `_` is another name). */
function sendsTransferEncoding(spec: RequestSpec): boolean {
  const f = spec.framing;
  if (f.kind === "both" || f.kind === "te-not-chunked") return true;
  const line = (n: string) => n.toLowerCase() === "transfer-encoding";
  return (f.kind === "chunked" && line(f.name)) || spec.extra.some(([n]) => line(n));
}

function asksUpgrade(spec: RequestSpec): boolean {
  return connectionTokens(spec).includes("upgrade") && spec.extra.some(([n]) => n.toLowerCase() === "upgrade");
}

function announcesClose(answer: Answer): boolean {
  return answer.headers.some(([n, v]) => n.toLowerCase() === "connection" && v.split(",").some((t) => t.trim().toLowerCase() === "close"));
}

function identityViolations(record: UpstreamRecord, request: RenderedRequest): Omit<Violation, "run" | "index">[] {
  const out: Omit<Violation, "run" | "index">[] = [];
  const expected = expectedIdentity(request.spec);
  const headers = pairs(record.rawHeaders);
  if (!expected) {
    out.push({ property: "b", kind: "unauthenticated-forwarded", detail: `forwarded although its credentials (${JSON.stringify(request.spec.credential)}) give no identity` });
    return out;
  }
  const identity = headers.filter(([n]) => normalName(n).startsWith(IDENTITY_PREFIX));
  for (const [name, value] of Object.entries(expected)) {
    const lines = identity.filter(([n]) => normalName(n) === name);
    if (lines.length !== 1 || lines[0]![1] !== value) {
      out.push({ property: "b", kind: "identity-wrong", detail: `${name} should be ${JSON.stringify(value)} once; the upstream got ${JSON.stringify(lines)}` });
    }
  }
  const foreign = identity.filter(([n]) => !(normalName(n) in expected));
  if (foreign.length > 0) out.push({ property: "b", kind: "identity-forged", detail: `the upstream got caller identity headers ${JSON.stringify(foreign)}` });
  const overrides = headers.filter(([n]) => OVERRIDES.has(normalName(n)));
  if (overrides.length > 0) out.push({ property: "b", kind: "override-forwarded", detail: `the upstream got override headers ${JSON.stringify(overrides)}` });
  const credentials = headers.filter(([n]) => normalName(n) === "authorization");
  if (credentials.length > 0) out.push({ property: "b", kind: "credential-forwarded", detail: "the upstream got the caller's Authorization header" });
  return out;
}

function describeOrigin(record: UpstreamRecord, sent: Map<string, { run: ConnectionRun; index: number }>, mine: ConnectionRun): string {
  const marker = MARKER.exec(record.url)?.[1] ?? SMUGGLED_MARKER.exec(record.url)?.[1];
  const origin = marker ? sent.get(marker) : undefined;
  if (!origin) return "";
  const where = origin.run === mine ? "this connection" : `connection ${origin.run.label}`;
  const how = MARKER.test(record.url) ? "request" : "smuggled in the body of request";
  return ` (${how} #${origin.index + 1} on ${where})`;
}

function pairs(raw: readonly string[]): [string, string][] {
  const out: [string, string][] = [];
  for (let i = 0; i < raw.length; i += 2) out.push([raw[i]!, raw[i + 1]!]);
  return out;
}
