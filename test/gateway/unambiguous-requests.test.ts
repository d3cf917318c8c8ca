import http from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { kitVerifier } from "../../src/gateway/hmac-kit.js";
import { signRequest } from "../../src/hmac/index.js";
import { CLIENT, HMAC_CRED, rawRequest, startHarness, type Harness } from "./harness.js";
import { openConsent, tokensFor } from "./oauth-driver.js";

/** Issue 20 item 9: the request the gateway authorizes is the request the upstream serves. */
interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** Sends headers exactly as given; an array value becomes repeated header lines. */
/** `headers`: an object, or node's flat list of names and values, sent as they are (two spellings of one name stay two lines). */
function send(base: string, method: string, target: string, headers: Record<string, string | string[]> | string[], body?: string): Promise<Answer> {
  const url = new URL(base);
  return new Promise((resolve, reject) => {
    const req = http.request({ host: url.hostname, port: url.port, method, path: target, headers, agent: false }, (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (c: string) => (text += c));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }));
    });
    req.on("error", reject);
    req.end(body);
  });
}

describe("gateway requests are unambiguous", () => {
  let h: Harness;
  let access: string;
  beforeAll(async () => {
    h = await startHarness(kitVerifier);
    access = (await tokensFor(h)).access_token;
  });
  afterAll(() => h.close());

  it("refuses Authorization, Date or Digest sent more than once (400), before anything is forwarded", async () => {
    const before = h.upstream.received.length;
    const body = '{"n":1}';
    const signed = signRequest({ clientId: HMAC_CRED.id, secret: HMAC_CRED.secret, method: "POST", url: "/v2/crm/v1/contacts", body, date: h.clock() });
    const { Authorization: authorization, Date: date, Digest: digest } = signed.headers as Record<string, string>;
    expect(authorization && date && digest).toBeTruthy();
    const base = { "content-type": "application/json" };
    // The single-valued request is fine: the refusals below are about repetition only.
    expect((await send(h.gateway.url, "POST", "/v2/crm/v1/contacts", { ...base, authorization: authorization!, date: date!, digest: digest! }, body)).status).toBe(200);
    const cases: Record<string, string | string[]>[] = [
      { ...base, authorization: [authorization!, authorization!], date: date!, digest: digest! },
      { ...base, authorization: authorization!, date: [date!, date!], digest: digest! },
      { ...base, authorization: authorization!, date: date!, digest: [digest!, "SHA-256=47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU="] },
    ];
    // The same name in two spellings is the same header. (A flat list gets no Host from node.)
    const host = new URL(h.gateway.url).host;
    const spelledTwice = [
      ["host", host, "content-type", "application/json", "Authorization", authorization!, "AUTHORIZATION", authorization!, "date", date!, "digest", digest!],
      ["host", host, "content-type", "application/json", "authorization", authorization!, "Date", date!, "dAtE", date!, "digest", digest!],
    ];
    for (const headers of [...cases, ...spelledTwice]) {
      const res = await send(h.gateway.url, "POST", "/v2/crm/v1/contacts", headers, body);
      expect(res.status).toBe(400);
      expect(JSON.parse(res.body)).toMatchObject({ error: "invalid_request", error_description: expect.stringMatching(/appears more than once/) });
    }
    const bearerTwice = await send(h.gateway.url, "GET", "/v2/crm/v1/contacts", { authorization: [`Bearer ${access}`, "Bearer rca_other"] });
    expect(bearerTwice.status).toBe(400);
    const basic = `Basic ${Buffer.from(`${CLIENT.id}:${CLIENT.secret}`).toString("base64")}`;
    const tokenTwice = await send(h.gateway.url, "POST", "/auth/oauth2/token", { "content-type": "application/x-www-form-urlencoded", authorization: [basic, basic] }, "grant_type=refresh_token&refresh_token=x&scope=crm");
    expect(tokenTwice.status).toBe(400);
    expect(h.upstream.received.length).toBe(before + 1);
  });

  it("refuses dot segments, `;` parameters, empty segments and encoded dots, slashes and backslashes; forwards nothing", async () => {
    const before = h.upstream.received.length;
    const targets = [
      "/v2/crm/v1/./x",
      "/v2/crm/v1/../crm/v1/x",
      "/v2/crm/v1/x/..",
      "/v2/crm/v1/%2e/x",
      "/v2/crm/v1/.%2E/x",
      "/v2/crm/v1/%2e%2e/%2e%2e/hr/v1/x",
      "/v2/crm/v1/a%2eb",
      "/v2/crm/v1/a%2Fb",
      "/v2/crm/v1/a%5cb",
      "/v2/crm/v1/a\\b",
      "/v2/crm/v1/a;jsessionid=1",
      "/v2/crm/v1/a;/b",
      "/v2/crm;v=1/v1/a",
      "/v2/crm/v1//x",
      // Resolved, these would reach the token endpoint or the health check instead of a product.
      "/v2/../auth/oauth2/token",
      "/v2/crm/v1/%2e%2e/%2e%2e/%2e%2e/healthz",
    ];
    for (const target of targets) {
      const res = await rawRequest(h.gateway.url, target, { authorization: `Bearer ${access}` });
      expect([target, res.status]).toEqual([target, 400]);
      expect(JSON.parse(res.body)).toMatchObject({ error: "invalid_request" });
    }
    expect(h.upstream.received.length).toBe(before);
    // Dots inside names and `;` in the query are not ambiguous and pass.
    for (const target of ["/v2/crm/v1/a.b/c..d/.e", "/v2/crm/v1/x?a=1;b=2"]) {
      const res = await rawRequest(h.gateway.url, target, { authorization: `Bearer ${access}` });
      expect([target, res.status]).toEqual([target, 200]);
      expect(h.upstream.received.at(-1)!.url).toBe(target.slice("/v2/crm".length));
    }
  });

  it("sets X-Forwarded-For from the socket and drops the client's forwarding headers", async () => {
    const res = await send(h.gateway.url, "GET", "/v2/crm/v1/who", {
      authorization: `Bearer ${access}`,
      "x-forwarded-for": "203.0.113.9",
      "x-forwarded-proto": "https",
      forwarded: "for=198.51.100.1",
      "x-real-ip": "198.51.100.2",
    });
    expect(res.status).toBe(200);
    const seen = JSON.parse(res.body) as { headers: Record<string, string> };
    expect(seen.headers["x-forwarded-for"]).toBe("127.0.0.1");
    expect(seen.headers["x-forwarded-proto"]).toBe("http");
    expect(seen.headers.forwarded).toBeUndefined();
    expect(seen.headers["x-real-ip"]).toBeUndefined();
    // Nor does a client's X-Forwarded-Proto make the consent cookie Secure.
    const page = await fetch(`${h.gateway.url}/auth?client_id=${CLIENT.id}&response_type=code&scope=crm`, { headers: { "x-forwarded-proto": "https" } });
    await page.text();
    expect(page.headers.get("set-cookie")).not.toMatch(/Secure/);
  });

  it("believes X-Forwarded-For and X-Forwarded-Proto from a trusted proxy, and appends the proxy", async () => {
    const trusting = await startHarness(kitVerifier, (c) => {
      c.trustedProxies = ["10.0.0.0/8", "127.0.0.1"];
    });
    try {
      const token = (await tokensFor(trusting)).access_token;
      const res = await send(trusting.gateway.url, "GET", "/v2/crm/v1/who", { authorization: `Bearer ${token}`, "x-forwarded-for": "203.0.113.9", "x-forwarded-proto": "https" });
      const seen = JSON.parse(res.body) as { headers: Record<string, string> };
      expect(seen.headers["x-forwarded-for"]).toBe("203.0.113.9, 127.0.0.1");
      expect(seen.headers["x-forwarded-proto"]).toBe("https");
      const page = await openConsent(trusting, { client_id: CLIENT.id, response_type: "code", scope: "crm" });
      await page.text();
      const viaProxy = await fetch(`${trusting.gateway.url}/auth?client_id=${CLIENT.id}&response_type=code&scope=crm`, { headers: { "x-forwarded-proto": "https" } });
      await viaProxy.text();
      expect(page.headers.get("set-cookie")).not.toMatch(/Secure/);
      expect(viaProxy.headers.get("set-cookie")).toMatch(/; Secure/);
    } finally {
      await trusting.close();
    }
  });

  it("gives an unknown HMAC client id exactly the answer a wrong signature gets", async () => {
    const call = async (clientId: string, secret: string) => {
      const signed = signRequest({ clientId, secret, method: "GET", url: "/v2/crm/v1/contacts?x=1", date: h.clock() });
      return send(h.gateway.url, "GET", "/v2/crm/v1/contacts?x=1", { ...(signed.headers as Record<string, string>), accept: "application/json" });
    };
    const unknown = await call("nobody-here", "whatever-secret-0000");
    const wrong = await call(HMAC_CRED.id, "wrong-secret-for-acme-crm");
    const comparable = (a: Answer) => {
      const { date: _date, ...headers } = a.headers;
      return { status: a.status, headers, body: JSON.parse(a.body) as unknown };
    };
    expect(comparable(unknown)).toEqual(comparable(wrong));
    expect(unknown.status).toBe(401);
    expect(JSON.parse(unknown.body)).toMatchObject({ error: "invalid_hmac", check: "signature" });
    expect(unknown.body).not.toContain("nobody-here");
  });
});
