import { createHmac } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { kitVerifier } from "../../src/gateway/hmac-kit.js";
import { signRequest } from "../../src/hmac/index.js";
import { HMAC_CRED, HMAC_OTHER, startHarness, type Harness } from "./harness.js";

interface Signed {
  method?: string;
  path: string;
  body?: string;
  cred?: { id: string; secret: string };
  date?: Date;
  signPath?: string;
  headers?: (h: Record<string, string>) => Record<string, string>;
}

async function call(h: Harness, s: Signed): Promise<Response> {
  const cred = s.cred ?? HMAC_CRED;
  const method = s.method ?? "GET";
  const signed = signRequest({ clientId: cred.id, secret: cred.secret, method, url: s.signPath ?? s.path, body: s.body, date: s.date ?? h.clock() });
  const headers: Record<string, string> = { ...signed.headers, "content-type": "application/json", accept: "application/json" };
  return fetch(h.gateway.url + s.path, { method, headers: s.headers ? s.headers(headers) : headers, body: s.body });
}

async function rejected(res: Response, check: string): Promise<Record<string, unknown>> {
  expect(res.status).toBe(401);
  expect(res.headers.get("www-authenticate")).toMatch(/^hmac realm="relcast"/);
  const body = (await res.json()) as Record<string, unknown>;
  expect(body).toMatchObject({ error: "invalid_hmac", check });
  return body;
}

describe("HMAC request signing (spec §5.2) over HTTP", () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness(kitVerifier);
  });
  afterAll(() => h.close());

  it("accepts a signed GET with query and proxies it as the company, without credentials", async () => {
    const res = await call(h, { path: "/v2/crm/v1/contacts?page=2&q=a%20b" });
    expect(res.status).toBe(200);
    const seen = (await res.json()) as { url: string; headers: Record<string, string> };
    expect(seen.url).toBe("/v1/contacts?page=2&q=a%20b");
    expect(seen.headers["x-relcast-company"]).toBe("acme");
    expect(seen.headers["x-relcast-client"]).toBe(HMAC_CRED.id);
    expect(seen.headers["x-relcast-auth"]).toBe("hmac");
    expect(seen.headers["x-relcast-user"]).toBeUndefined();
    expect(seen.headers.authorization).toBeUndefined();
  });

  it("accepts a signed POST with a matching Digest and forwards the body", async () => {
    const res = await call(h, { method: "POST", path: "/v2/crm/v1/contacts", body: '{"name":"Ada"}' });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { body: string }).body).toBe('{"name":"Ada"}');
  });

  it("accepts HMAC on an HMAC-only product", async () => {
    const hr = { id: "hr-acme", secret: "hmac-secret-for-acme-hr-000001" };
    const local = await startHarness(kitVerifier, (c) => c.hmacCredentials!.push({ clientId: hr.id, secret: hr.secret, company: "acme", product: "hr" }));
    try {
      expect((await call(local, { path: "/v2/hr/v1/people", cred: hr })).status).toBe(200);
    } finally {
      await local.close();
    }
  });

  it("rejects a missing, malformed or skewed Date", async () => {
    await rejected(await call(h, { path: "/v2/crm/v1/x", headers: ({ Date: _d, ...rest }) => rest }), "date-missing");
    await rejected(await call(h, { path: "/v2/crm/v1/x", headers: (x) => ({ ...x, Date: "yesterday" }) }), "date-format");
    await rejected(await call(h, { path: "/v2/crm/v1/x", date: new Date(h.clock().getTime() - 300_000) }), "date-skew");
    await rejected(await call(h, { path: "/v2/crm/v1/x", date: new Date(h.clock().getTime() + 300_000) }), "date-skew");
    expect((await call(h, { path: "/v2/crm/v1/x", date: new Date(h.clock().getTime() - 299_000) })).status).toBe(200);
  });

  it("rejects a wrong signature and reports the expected signing string", async () => {
    const body = await rejected(await call(h, { path: "/v2/crm/v1/x?a=1", cred: { id: HMAC_CRED.id, secret: "not-the-right-secret-000" } }), "signature");
    expect(body.expected_signing_string).toBe(`date: ${h.clock().toUTCString()}\nGET /v2/crm/v1/x?a=1 HTTP/1.1`);
    expect(JSON.stringify(body)).not.toContain(HMAC_CRED.secret);
  });

  it("rejects a signature over another path or method", async () => {
    await rejected(await call(h, { path: "/v2/crm/v1/x", signPath: "/v2/crm/v1/y" }), "signature");
    const signed = signRequest({ clientId: HMAC_CRED.id, secret: HMAC_CRED.secret, method: "GET", url: "/v2/crm/v1/x", date: h.clock() });
    await rejected(await fetch(h.gateway.url + "/v2/crm/v1/x", { method: "PUT", headers: { ...signed.headers, digest: "SHA-256=47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=" } }), "signature");
  });

  it("rejects an unknown credential, a bad Authorization grammar and another algorithm", async () => {
    await rejected(await call(h, { path: "/v2/crm/v1/x", cred: { id: "nobody-here", secret: "whatever-secret-000" } }), "signature");
    await rejected(await call(h, { path: "/v2/crm/v1/x", headers: (x) => ({ ...x, Authorization: "hmac username=abc" }) }), "authorization-grammar");
    await rejected(
      await call(h, { path: "/v2/crm/v1/x", headers: (x) => ({ ...x, Authorization: x.Authorization!.replace("hmac-sha256", "hmac-sha1") }) }),
      "algorithm",
    );
  });

  it("requires a matching Digest on bodies", async () => {
    await rejected(await call(h, { method: "POST", path: "/v2/crm/v1/x", body: "{}", headers: ({ Digest: _d, ...rest }) => rest }), "digest-missing");
    const tampered = await call(h, { method: "POST", path: "/v2/crm/v1/x", body: '{"a":1}', headers: (x) => ({ ...x, Digest: "SHA-256=" + Buffer.alloc(32).toString("base64") }) });
    const body = await rejected(tampered, "digest-mismatch");
    expect(body.expected_digest).toBeDefined();
    expect(h.upstream.received.some((r) => r.body === '{"a":1}')).toBe(false);
  });

  it("refuses HMAC bodies over the limit with 413", async () => {
    const res = await call(h, { method: "POST", path: "/v2/crm/v1/x", body: "x".repeat(1024 * 1024 + 1) });
    expect(res.status).toBe(413);
  });

  it("rejects a credential used on another product", async () => {
    const body = await rejected(await call(h, { path: "/v2/crm/v1/x", cred: HMAC_OTHER }), "product");
    expect(body.error_description).toContain("crm");
    expect((await call(h, { path: "/v2/billing/v1/x", cred: HMAC_OTHER })).status).toBe(200);
  });

  it("rejects the deprecated request-line without the query unless the config allows it", async () => {
    await rejected(await call(h, { path: "/v2/crm/v1/x?a=1", signPath: "/v2/crm/v1/x" }), "deprecated-request-line");
    const lenient = await startHarness(kitVerifier, (c) => {
      c.hmac = { allowDeprecatedRequestLine: true };
    });
    try {
      const res = await call(lenient, { path: "/v2/crm/v1/x?a=1", signPath: "/v2/crm/v1/x" });
      expect(res.status).toBe(200);
      expect(res.headers.get("deprecation")).toBe("@1702339200");
    } finally {
      await lenient.close();
    }
  });

  it("matches an independent computation of the spec's signature", async () => {
    const date = h.clock().toUTCString();
    const signature = createHmac("sha256", HMAC_CRED.secret).update(`date: ${date}\nGET /v2/crm/v1/x?b=2 HTTP/1.1`).digest("base64");
    const res = await fetch(h.gateway.url + "/v2/crm/v1/x?b=2", {
      headers: { date, authorization: `hmac username="${HMAC_CRED.id}", algorithm="hmac-sha256", headers="date request-line", signature="${signature}"` },
    });
    expect(res.status).toBe(200);
  });
});
