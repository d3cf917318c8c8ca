import http from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isLoopback, unpinnedIssuerWarning } from "../../src/gateway/oauth/issuer-warning.js";
import { CLIENT, USER, startHarness, type Harness } from "./harness.js";

/**
 * Issue 34 item 6: without a configured `issuer` the gateway names itself
 * after the request's Host, so no answer that carries a Host-made name may
 * be kept by a shared cache; with an issuer the metadata is the same for
 * everyone and stays cacheable for an hour.
 */
const noHmac = () => ({ ok: false as const, check: "signature", message: "HMAC not used in this test" });
const METADATA = "/.well-known/oauth-authorization-server";
const FOREIGN_HOST = "attacker.example:8443";

interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** A request with the Host header given (fetch would not let a test set it). */
function request(base: string, method: string, target: string, headers: Record<string, string>, body?: string): Promise<Answer> {
  const url = new URL(base);
  return new Promise((resolve, reject) => {
    const req = http.request({ host: url.hostname, port: url.port, method, path: target, headers: { ...headers, ...(body === undefined ? {} : { "content-length": String(Buffer.byteLength(body)) }) } }, (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (c: string) => (text += c));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }));
    });
    req.on("error", reject);
    req.end(body);
  });
}

/** The consent page's sealed request and CSRF cookie, read from a raw answer (oauth-driver.ts reads a fetch Response). */
function readForm(page: Answer): { request: string; cookie: string } {
  const request = /name="request" value="([^"]+)"/.exec(page.body)?.[1]?.replace(/&#(\d+);/g, (_m, c: string) => String.fromCharCode(Number(c)));
  const cookie = page.headers["set-cookie"]?.[0]?.split(";")[0];
  if (!request || !cookie) throw new Error("consent page lacks the hidden request or the cookie");
  return { request, cookie };
}

/** Every header and the body of an answer, as one text to look for a Host-made name in. */
const wholeAnswer = (a: Answer) => JSON.stringify(a.headers) + a.body;

describe("discovery and Host: an issuer nobody configured is never cached by others", () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness(noHmac);
  });
  afterAll(() => h.close());

  it("serves Host-made metadata no-store, for GET and HEAD", async () => {
    const get = await request(h.gateway.url, "GET", METADATA, { host: FOREIGN_HOST });
    expect(get.status).toBe(200);
    expect(JSON.parse(get.body)).toMatchObject({ issuer: `http://${FOREIGN_HOST}`, token_endpoint: `http://${FOREIGN_HOST}/auth/oauth2/token` });
    expect(get.headers["cache-control"]).toBe("no-store");
    const head = await request(h.gateway.url, "HEAD", METADATA, { host: FOREIGN_HOST });
    expect(head.status).toBe(200);
    expect(head.headers["cache-control"]).toBe("no-store");
    const own = await request(h.gateway.url, "GET", METADATA, { host: new URL(h.gateway.url).host });
    expect(own.headers["cache-control"]).toBe("no-store");
  });

  it("every answer that carries the Host-made issuer is no-store (metadata, consent page, error and code redirects)", async () => {
    const host = { host: FOREIGN_HOST };
    const query = (extra: Record<string, string>) => "/auth?" + new URLSearchParams({ client_id: CLIENT.id, response_type: "code", scope: "crm", state: "s", ...extra }).toString();
    const answers: Answer[] = [
      await request(h.gateway.url, "GET", METADATA, host),
      await request(h.gateway.url, "GET", query({}), host),
      await request(h.gateway.url, "GET", query({ response_type: "token" }), host),
      await request(h.gateway.url, "GET", query({ scope: "hr" }), host),
    ];
    // A completed sign-in: the code redirect carries iss.
    const page = answers[1]!;
    const post = (fields: Record<string, string>) => {
      const form = readForm(page);
      const body = new URLSearchParams({ request: form.request, ...fields }).toString();
      return request(h.gateway.url, "POST", "/auth", { ...host, "content-type": "application/x-www-form-urlencoded", cookie: form.cookie }, body);
    };
    answers.push(await post({ username: USER.name, password: "wrong password" }));
    answers.push(await post({ username: USER.name, password: USER.password, decision: "approve" }));
    const again = await request(h.gateway.url, "GET", query({}), host);
    answers.push(again);
    const form = readForm(again);
    answers.push(await request(h.gateway.url, "POST", "/auth", { ...host, "content-type": "application/x-www-form-urlencoded", cookie: form.cookie }, new URLSearchParams({ request: form.request, decision: "deny" }).toString()));
    const carrying = answers.filter((a) => wholeAnswer(a).includes("attacker.example"));
    expect(carrying.length).toBeGreaterThanOrEqual(4); // metadata and the redirects name the Host
    for (const answer of answers) expect(answer.headers["cache-control"], wholeAnswer(answer).slice(0, 300)).toMatch(/no-store/);
  });
});

describe("discovery with a configured issuer", () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness(noHmac, (c) => {
      c.issuer = "https://gateway.example.test";
    });
  });
  afterAll(() => h.close());

  it("names the configured issuer whatever the Host, and any cache may keep it for an hour", async () => {
    for (const host of [FOREIGN_HOST, new URL(h.gateway.url).host]) {
      const res = await request(h.gateway.url, "GET", METADATA, { host });
      expect(res.status).toBe(200);
      expect(JSON.parse(res.body)).toMatchObject({ issuer: "https://gateway.example.test", token_endpoint: "https://gateway.example.test/auth/oauth2/token" });
      expect(res.headers["cache-control"]).toBe("public, max-age=3600");
      expect(res.body).not.toContain("attacker.example");
    }
  });
});

describe("relcast gateway warns when it listens beyond loopback without an issuer", () => {
  it.each([
    ["127.0.0.1", true],
    ["127.8.9.10", true],
    ["localhost", true],
    ["::1", true],
    ["[::1]", true],
    ["0:0:0:0:0:0:0:1", true],
    ["::ffff:127.0.0.1", true],
    ["0.0.0.0", false],
    ["::", false],
    ["192.168.1.20", false],
    ["10.0.0.1", false],
    ["gateway.internal", false],
    ["128.0.0.1", false],
  ])("%s is loopback: %s", (host, loopback) => {
    expect(isLoopback(host)).toBe(loopback);
    const warning = unpinnedIssuerWarning({ issuer: undefined, host, servesAuth: true, source: "gateway.json" });
    if (loopback) expect(warning).toBeUndefined();
    else expect(warning).toMatch(/gateway\.json has no `issuer`.*Host header.*Set `issuer`/);
  });

  it("says nothing with an issuer, or when only the product API is served", () => {
    expect(unpinnedIssuerWarning({ issuer: "https://gw.example", host: "0.0.0.0", servesAuth: true, source: "g.json" })).toBeUndefined();
    expect(unpinnedIssuerWarning({ issuer: undefined, host: "0.0.0.0", servesAuth: false, source: "g.json" })).toBeUndefined();
  });
});
