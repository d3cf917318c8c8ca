import Database from "better-sqlite3";
import { createHash } from "node:crypto";
import net from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { kitVerifier } from "../../src/gateway/hmac-kit.js";
import { createSignedFetch, signRequest } from "../../src/hmac/index.js";
import { HMAC_CRED, startHarness, type Harness } from "./harness.js";

/**
 * Issue 34 item 4: a signed request with a non-safe method is accepted once
 * within the Date window (401 `check: "replay"` after that); GET, HEAD and
 * OPTIONS stay repeatable; an HMAC GET or HEAD with a body is refused.
 * PostgreSQL and two instances: postgres-state.test.ts.
 */
interface Sent {
  status: number;
  body: Record<string, unknown>;
  headers: Headers;
}

function sign(h: Harness, method: string, target: string, body?: string, date?: Date): Record<string, string> {
  return signRequest({ clientId: HMAC_CRED.id, secret: HMAC_CRED.secret, method, url: target, body, date: date ?? h.clock() }).headers as Record<string, string>;
}

async function send(h: Harness, method: string, target: string, headers: Record<string, string>, body?: string): Promise<Sent> {
  const res = await fetch(h.gateway.url + target, { method, headers: { ...headers, "content-type": "application/json" }, body });
  const text = await res.text();
  return { status: res.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : {}, headers: res.headers };
}

function expectReplay(answer: Sent): void {
  expect(answer.status).toBe(401);
  expect(answer.headers.get("www-authenticate")).toMatch(/^hmac realm="relcast"/);
  expect(answer.body).toMatchObject({ error: "invalid_hmac", check: "replay" });
  expect(String(answer.body.error_description)).toMatch(/already accepted.*sign it again with a new Date/);
}

/** How many requests the upstream received for `url` (each test uses its own path). */
const seen = (h: Harness, url: string) => h.upstream.received.filter((r) => r.url === url).length;

/** Raw bytes to the gateway (a request with `Connection: close`); what it answered before closing. */
function rawExchange(h: Harness, payload: string): Promise<string> {
  const url = new URL(h.gateway.url);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(url.port), url.hostname, () => socket.write(payload)); // not end(): a half-closed socket may be closed before a proxied answer
    let got = "";
    socket.on("data", (d: Buffer) => (got += d.toString("latin1")));
    socket.on("error", (err: NodeJS.ErrnoException) => (err.code === "ECONNRESET" || err.code === "EPIPE" ? resolve(got) : reject(err)));
    socket.on("close", () => resolve(got));
  });
}

describe("HMAC replay refusal (SQLite)", () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness(kitVerifier);
  });
  afterAll(() => h.close());

  it.each([
    ["POST", '{"name":"Ada"}'],
    ["PUT", '{"name":"Ada"}'],
    ["PATCH", '{"name":"Ada"}'],
    ["DELETE", undefined],
    ["DELETE", "{}"],
    ["PROPFIND", undefined],
  ])("accepts a signed %s (body %s) once: the copy is 401 replay and never reaches the upstream", async (method, body) => {
    const target = `/v2/crm/v1/once-${method.toLowerCase()}-${body ? "body" : "empty"}`;
    const headers = sign(h, method, target, body);
    expect((await send(h, method, target, headers, body)).status).toBe(200);
    expectReplay(await send(h, method, target, headers, body));
    h.clock.advance(120); // still inside the 300 s window of that Date
    expectReplay(await send(h, method, target, headers, body));
    expect(seen(h, target.slice("/v2/crm".length))).toBe(1);
  });

  it("keys on the signature: a copy with another body and a matching Digest is refused too", async () => {
    const target = "/v2/crm/v1/once-other-body";
    const headers = sign(h, "POST", target, '{"amount":1}');
    expect((await send(h, "POST", target, headers, '{"amount":1}')).status).toBe(200);
    const forged = '{"amount":1000}';
    const digest = `SHA-256=${createHash("sha256").update(forged).digest("base64")}`;
    expectReplay(await send(h, "POST", target, { ...headers, Digest: digest }, forged));
    expect(h.upstream.received.some((r) => r.body === forged)).toBe(false);
  });

  it("lets the same request through again once it is signed again with a new Date", async () => {
    const target = "/v2/crm/v1/once-resigned";
    const body = '{"n":1}';
    expect((await send(h, "POST", target, sign(h, "POST", target, body), body)).status).toBe(200);
    h.clock.advance(1);
    expect((await send(h, "POST", target, sign(h, "POST", target, body), body)).status).toBe(200);
    expect(seen(h, "/v1/once-resigned")).toBe(2);
  });

  it("takes three POSTs to one target in a row from relcast's signed fetch (each signed in a second of its own)", async () => {
    const signedFetch = createSignedFetch({ clientId: HMAC_CRED.id, secret: HMAC_CRED.secret, now: h.clock });
    for (let i = 0; i < 3; i++) {
      const res = await signedFetch(`${h.gateway.url}/v2/crm/v1/once-signed-fetch`, { method: "POST", body: `{"n":${i}}`, headers: { "content-type": "application/json" } });
      expect(res.status).toBe(200);
      await res.arrayBuffer();
    }
    expect(h.upstream.received.filter((r) => r.url === "/v1/once-signed-fetch").map((r) => r.body)).toEqual(['{"n":0}', '{"n":1}', '{"n":2}']);
  });

  it.each(["GET", "HEAD", "OPTIONS"])("keeps a signed %s repeatable", async (method) => {
    const target = `/v2/crm/v1/repeatable-${method.toLowerCase()}?q=1`;
    const headers = sign(h, method, target);
    for (let i = 0; i < 3; i++) expect((await send(h, method, target, headers)).status).toBe(200);
    expect(seen(h, `/v1/repeatable-${method.toLowerCase()}?q=1`)).toBe(3);
  });

  it("lets exactly one of 20 concurrent copies of one signed POST reach the upstream", async () => {
    const target = "/v2/crm/v1/once-concurrent";
    const body = '{"transfer":42}';
    const headers = sign(h, "POST", target, body);
    const answers = await Promise.all(Array.from({ length: 20 }, () => send(h, "POST", target, headers, body)));
    expect(answers.filter((a) => a.status === 200)).toHaveLength(1);
    for (const a of answers.filter((x) => x.status !== 200)) expectReplay(a);
    expect(seen(h, "/v1/once-concurrent")).toBe(1);
  });

  it("still refuses a signature recorded before a restart", async () => {
    const target = "/v2/crm/v1/once-restart";
    const headers = sign(h, "PUT", target, "{}");
    expect((await send(h, "PUT", target, headers, "{}")).status).toBe(200);
    await h.restart();
    expectReplay(await send(h, "PUT", target, headers, "{}"));
    expect(seen(h, "/v1/once-restart")).toBe(1);
  });

  it("does not use up a signature on a request it refuses before the proxy", async () => {
    const target = "/v2/billing/v1/once-refused";
    const body = "{}";
    const headers = sign(h, "POST", target, body); // HMAC_CRED belongs to crm, not billing
    for (let i = 0; i < 2; i++) expect((await send(h, "POST", target, headers, body)).body).toMatchObject({ check: "product" });
  });

  it("stores only a hash of the signature, and purges it once its Date has left the window", async () => {
    const target = "/v2/crm/v1/once-stored";
    const headers = sign(h, "DELETE", target);
    expect((await send(h, "DELETE", target, headers)).status).toBe(200);
    const signature = /signature="([^"]+)"/.exec(headers.Authorization!)![1]!;
    const db = new Database(h.dbFile, { readonly: true });
    try {
      const rows = () => db.prepare("SELECT signature_hash, expires_at FROM hmac_replay").all() as { signature_hash: string; expires_at: number }[];
      const mine = createHash("sha256").update(Buffer.from(signature, "base64")).digest("hex");
      const row = rows().find((r) => r.signature_hash === mine);
      expect(row?.expires_at).toBe(new Date(headers.Date!).getTime() + 300_000);
      expect(JSON.stringify(rows())).not.toContain(signature);

      // Past the window (and the minute kept for slower clocks) the next recorded signature purges the old rows.
      h.clock.advance(300 + 61);
      expect((await send(h, "DELETE", target, headers)).body).toMatchObject({ check: "date-skew" });
      const fresh = sign(h, "DELETE", target);
      expect((await send(h, "DELETE", target, fresh)).status).toBe(200);
      const left = rows();
      expect(left.find((r) => r.signature_hash === mine)).toBeUndefined();
      expect(left.map((r) => r.expires_at)).toContain(new Date(fresh.Date!).getTime() + 300_000);
      expect(left.every((r) => r.expires_at >= h.clock().getTime() - 60_000)).toBe(true);
    } finally {
      db.close();
    }
  });
});

describe("HMAC replay refusal with the deprecated request-line allowed", () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness(kitVerifier, (c) => {
      c.hmac = { allowDeprecatedRequestLine: true };
    });
  });
  afterAll(() => h.close());

  it("refuses the signature again under another query (which that signature does not cover)", async () => {
    const headers = sign(h, "POST", "/v2/crm/v1/orders", "{}");
    expect((await send(h, "POST", "/v2/crm/v1/orders?n=1", headers, "{}")).status).toBe(200);
    expectReplay(await send(h, "POST", "/v2/crm/v1/orders?n=2", headers, "{}"));
    expect(h.upstream.received.map((r) => r.url)).toEqual(["/v1/orders?n=1"]);
  });
});

describe("HMAC GET, HEAD and OPTIONS (methods that may be repeated) with a body", () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness(kitVerifier);
  });
  afterAll(() => h.close());

  const body = '{"filter":"all"}';
  const bodyDigest = `SHA-256=${createHash("sha256").update(body).digest("base64")}`;
  const chunked = `${Buffer.byteLength(body).toString(16)}\r\n${body}\r\n0\r\n\r\n`;

  it.each([
    ["GET", "Content-Length", false],
    ["GET", "Content-Length", true],
    ["GET", "chunked", false],
    ["GET", "chunked", true],
    ["HEAD", "Content-Length", false],
    ["HEAD", "chunked", true],
    ["OPTIONS", "Content-Length", true],
    ["OPTIONS", "chunked", false],
  ])("refuses a signed %s with a %s body (Digest sent: %s) with 400, forwarding nothing", async (method, framing, withDigest) => {
    const target = `/v2/crm/v1/search-${method.toLowerCase()}`;
    const signed = sign(h, method, target);
    const url = new URL(h.gateway.url);
    const lines = [`${method} ${target} HTTP/1.1`, `Host: ${url.host}`, `Date: ${signed.Date}`, `Authorization: ${signed.Authorization}`, "Content-Type: application/json", "Connection: close"];
    if (withDigest) lines.push(`Digest: ${bodyDigest}`);
    lines.push(framing === "chunked" ? "Transfer-Encoding: chunked" : `Content-Length: ${Buffer.byteLength(body)}`);
    const answer = await rawExchange(h, `${lines.join("\r\n")}\r\n\r\n${framing === "chunked" ? chunked : body}`);
    expect(answer).toMatch(/^HTTP\/1\.1 400 /);
    if (method !== "HEAD") {
      const json = JSON.parse(answer.slice(answer.indexOf("\r\n\r\n") + 4)) as Record<string, string>;
      expect(json.error).toBe("invalid_request");
      expect(json.error_description).toMatch(new RegExp(`signed ${method} request must not carry a body`));
    }
    expect(seen(h, target.slice("/v2/crm".length))).toBe(0);
  });

  it("refuses a copy of a signed OPTIONS sent again with another body and a fresh Digest: neither reaches the upstream", async () => {
    const target = "/v2/crm/v1/options-body";
    const signed = sign(h, "OPTIONS", target);
    const url = new URL(h.gateway.url);
    for (const payload of ['{"op":"sent"}', '{"op":"attacker-chosen"}']) {
      const digest = `SHA-256=${createHash("sha256").update(payload).digest("base64")}`;
      const answer = await rawExchange(h, `OPTIONS ${target} HTTP/1.1\r\nHost: ${url.host}\r\nDate: ${signed.Date}\r\nAuthorization: ${signed.Authorization}\r\nDigest: ${digest}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(payload)}\r\nConnection: close\r\n\r\n${payload}`);
      expect(answer).toMatch(/^HTTP\/1\.1 400 /);
    }
    expect(seen(h, "/v1/options-body")).toBe(0);
  });

  it("still takes a signed GET with Content-Length: 0", async () => {
    const target = "/v2/crm/v1/search-empty";
    const signed = sign(h, "GET", target);
    const url = new URL(h.gateway.url);
    const answer = await rawExchange(h, `GET ${target} HTTP/1.1\r\nHost: ${url.host}\r\nDate: ${signed.Date}\r\nAuthorization: ${signed.Authorization}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n`);
    expect(answer).toMatch(/^HTTP\/1\.1 200 /);
    expect(seen(h, "/v1/search-empty")).toBe(1);
  });
});
