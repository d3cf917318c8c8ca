import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { kitVerifier } from "../../src/gateway/hmac-kit.js";
import { signRequest } from "../../src/hmac/index.js";
import { HMAC_CRED, rawRequest, startHarness, type Harness } from "./harness.js";

/**
 * The HMAC fast path (src/gateway/hmac-fast-path.ts) serves signed requests
 * without a body in front of hono. It must take none that hono's node
 * adapter would refuse, whatever the Host header, and must answer the ones
 * it takes as the general chain does.
 */
describe("HMAC fast path", () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness(kitVerifier);
  });
  afterAll(() => h.close());

  const signed = (target: string, host?: string) => {
    const { headers } = signRequest({ clientId: HMAC_CRED.id, secret: HMAC_CRED.secret, method: "GET", url: target, date: h.clock() });
    return rawRequest(h.gateway.url, target, host === undefined ? headers : { ...headers, host });
  };

  it.each([
    ["a plain host and port", "gateway.test:8080"],
    ["a host without a port", "gateway.test"],
    ["an upper-case host", "Gateway.TEST"],
    ["a port the adapter parses (80)", "gateway.test:80"],
    ["a port above 59999", "gateway.test:60001"],
    ["a bracketed IPv6 address", "[::1]:8080"],
  ])("proxies a signed GET with %s", async (_name, host) => {
    const res = await signed("/v2/crm/v1/contacts?q=a%20b", host);
    expect(res.status).toBe(200);
    expect(JSON.parse(res.body)).toMatchObject({ url: "/v1/contacts?q=a%20b", headers: { "x-relcast-company": HMAC_CRED.company, "x-forwarded-host": host } });
  });

  it.each([
    ["a space", "gateway test"],
    ["a number that is no IPv4 address", "256.1.1.1:80"],
    ["an address the URL parser rewrites", "0x7f.0.0.1:80"],
  ])("leaves a Host with %s to the adapter's 400", async (_name, host) => {
    const res = await signed("/v2/crm/v1/contacts", host);
    expect(res.status).toBe(400);
    expect(JSON.parse(res.body)).toMatchObject({ error: "invalid_request", error_description: "the request target or Host header is malformed" });
  });

  it("answers a failing check as the general chain does", async () => {
    const { headers } = signRequest({ clientId: HMAC_CRED.id, secret: "not-the-secret-at-all", method: "GET", url: "/v2/crm/v1/contacts", date: h.clock() });
    const res = await rawRequest(h.gateway.url, "/v2/crm/v1/contacts", headers);
    expect(res.status).toBe(401);
    expect(JSON.parse(res.body)).toMatchObject({ error: "invalid_hmac", check: "signature" });
  });
});
