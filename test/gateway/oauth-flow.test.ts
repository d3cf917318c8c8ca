import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CLIENT, USER, rawRequest, startHarness, type Harness } from "./harness.js";
import { authorize, callApi, codeGrant, openConsent, readForm, refreshGrant, submitForm, tokenRequest, tokensFor, type Tokens } from "./oauth-driver.js";

const noHmac = () => ({ ok: false as const, check: "signature", message: "HMAC not used in this test" });

describe("OAuth 2.0 authorization code flow over HTTP", () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness(noHmac);
  });
  afterAll(() => h.close());

  it("signs in, consents, exchanges the code and calls the product API as the user", async () => {
    const res = await openConsent(h, { client_id: CLIENT.id, response_type: "code", scope: "crm billing:read", state: "xyz" });
    const form = await readForm(res);
    expect(form.html).toContain("App One");
    expect(form.html).toContain("<code>crm</code>");
    expect(form.html).toContain("<code>billing:read</code>");
    expect(res.headers.get("x-frame-options")).toBe("DENY");
    expect(res.headers.get("set-cookie")).toMatch(/HttpOnly; SameSite=Strict/);

    const approved = await submitForm(h, form, { username: USER.name, password: USER.password, decision: "approve" });
    expect(approved.status).toBe(303);
    const location = new URL(approved.headers.get("location")!);
    expect(location.origin + location.pathname).toBe("https://app.example.test/callback");
    expect(location.searchParams.get("tenant")).toBe("1");
    expect(location.searchParams.get("state")).toBe("xyz");
    const code = location.searchParams.get("code")!;
    expect(code).toMatch(/^rcc_/);

    const tokenRes = await tokenRequest(h, codeGrant(code, "billing:read crm"));
    expect(tokenRes.status).toBe(200);
    expect(tokenRes.headers.get("cache-control")).toBe("no-store");
    const tokens = (await tokenRes.json()) as Tokens;
    expect(tokens).toEqual({ access_token: expect.stringMatching(/^rca_/), token_type: "bearer", expires_in: 3600, refresh_token: expect.stringMatching(/^rcr_/) });

    const api = await callApi(h, "/v2/crm/v1/contacts?limit=2", tokens.access_token, { headers: { cookie: "a=b", "x-relcast-user": "mallory" } });
    expect(api.status).toBe(200);
    const seen = (await api.json()) as { url: string; headers: Record<string, string> };
    expect(seen.url).toBe("/v1/contacts?limit=2");
    expect(seen.headers["x-relcast-user"]).toBe(USER.name);
    expect(seen.headers["x-relcast-client"]).toBe(CLIENT.id);
    expect(seen.headers["x-relcast-auth"]).toBe("bearer");
    expect(seen.headers.authorization).toBeUndefined();
    expect(seen.headers.cookie).toBeUndefined();

    const readOnly = await callApi(h, "/v2/billing/v1/invoices", tokens.access_token);
    expect(readOnly.status).toBe(200);
    expect(((await readOnly.json()) as { url: string }).url).toBe("/billing-base/v1/invoices");
    const write = await callApi(h, "/v2/billing/v1/invoices", tokens.access_token, { method: "POST", body: "{}" });
    expect(write.status).toBe(403);
    expect(write.headers.get("www-authenticate")).toContain('error="insufficient_scope"');
  });

  it("deny redirects with error=access_denied and the state", async () => {
    const form = await readForm(await openConsent(h, { client_id: CLIENT.id, response_type: "code", scope: "crm", state: "s2" }));
    const res = await submitForm(h, form, { decision: "deny" });
    expect(res.status).toBe(303);
    const location = new URL(res.headers.get("location")!);
    expect(location.searchParams.get("error")).toBe("access_denied");
    expect(location.searchParams.get("state")).toBe("s2");
    expect(location.searchParams.get("code")).toBeNull();
  });

  it("a wrong password shows the form again and issues no code", async () => {
    const form = await readForm(await openConsent(h, { client_id: CLIENT.id, response_type: "code", scope: "crm" }));
    const res = await submitForm(h, form, { username: USER.name, password: "wrong", decision: "approve" });
    expect(res.status).toBe(200);
    expect(await res.text()).toContain("wrong password");
    const retry = await submitForm(h, form, { username: USER.name, password: USER.password, decision: "approve" });
    expect(retry.status).toBe(303);
  });

  it("locks a user name for 15 minutes after 5 wrong passwords", async () => {
    const form = await readForm(await openConsent(h, { client_id: CLIENT.id, response_type: "code", scope: "crm" }));
    for (let i = 0; i < 5; i++) expect((await submitForm(h, form, { username: USER.name, password: `guess-${i}`, decision: "approve" })).status).toBe(200);
    const locked = await submitForm(h, form, { username: USER.name, password: USER.password, decision: "approve" });
    expect(locked.status).toBe(429);
    expect(Number(locked.headers.get("retry-after"))).toBe(900);
    h.clock.advance(900);
    const fresh = await readForm(await openConsent(h, { client_id: CLIENT.id, response_type: "code", scope: "crm" }));
    expect((await submitForm(h, fresh, { username: USER.name, password: USER.password, decision: "approve" })).status).toBe(303);
  });

  it("refuses a form posted without the browser's CSRF cookie, a tampered form, and a second submission", async () => {
    const form = await readForm(await openConsent(h, { client_id: CLIENT.id, response_type: "code", scope: "crm" }));
    const fields = { username: USER.name, password: USER.password, decision: "approve" };
    expect((await submitForm(h, form, fields, "")).status).toBe(403);
    const other = await readForm(await openConsent(h, { client_id: CLIENT.id, response_type: "code", scope: "crm" }));
    expect((await submitForm(h, form, fields, other.cookie)).status).toBe(403);
    const tampered = { ...form, request: form.request.replace(/^./, (c) => (c === "A" ? "B" : "A")) };
    expect((await submitForm(h, tampered, fields)).status).toBe(400);
    expect((await submitForm(h, form, fields)).status).toBe(303);
    expect((await submitForm(h, form, fields)).status).toBe(400);
  });

  it("never redirects to an unregistered URL and reports bad requests to the registered one", async () => {
    const unknown = await openConsent(h, { client_id: "nobody", response_type: "code", scope: "crm" });
    expect(unknown.status).toBe(400);
    const evil = await openConsent(h, { client_id: CLIENT.id, response_type: "code", scope: "crm", redirect_uri: "https://evil.test/" });
    expect(evil.status).toBe(400);
    expect(evil.headers.get("location")).toBeNull();
    const badScope = await openConsent(h, { client_id: CLIENT.id, response_type: "code", scope: "hr" });
    expect(badScope.status).toBe(303);
    expect(new URL(badScope.headers.get("location")!).searchParams.get("error")).toBe("invalid_scope");
    const badType = await openConsent(h, { client_id: CLIENT.id, response_type: "token", scope: "crm" });
    expect(new URL(badType.headers.get("location")!).searchParams.get("error")).toBe("unsupported_response_type");
  });

  it("requires the token request's scope to equal the authorized scope", async () => {
    const code = await authorize(h, "crm");
    const res = await tokenRequest(h, codeGrant(code, "crm billing"));
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ error: "invalid_scope" });
    // The code was not spent by the refused request.
    expect((await tokenRequest(h, codeGrant(code, "crm"))).status).toBe(200);
  });

  it("codes are single use; replaying one revokes the tokens issued for it", async () => {
    const code = await authorize(h);
    const first = (await (await tokenRequest(h, codeGrant(code))).json()) as Tokens;
    expect((await callApi(h, "/v2/crm/v1/x", first.access_token)).status).toBe(200);
    const replay = await tokenRequest(h, codeGrant(code));
    expect(replay.status).toBe(400);
    expect(await replay.json()).toMatchObject({ error: "invalid_grant" });
    const after = await callApi(h, "/v2/crm/v1/x", first.access_token);
    expect(after.status).toBe(401);
    expect(after.headers.get("www-authenticate")).toContain('error="invalid_token"');
    expect((await tokenRequest(h, refreshGrant(first.refresh_token))).status).toBe(400);
  });

  it("codes expire after 10 minutes", async () => {
    const code = await authorize(h);
    h.clock.advance(600);
    const res = await tokenRequest(h, codeGrant(code));
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ error: "invalid_grant", error_description: "authorization code expired" });
  });

  it("access tokens expire after 3600 s; the refresh grant rotates both tokens", async () => {
    const tokens = await tokensFor(h);
    h.clock.advance(3599);
    expect((await callApi(h, "/v2/crm/v1/x", tokens.access_token)).status).toBe(200);
    h.clock.advance(1);
    const expired = await callApi(h, "/v2/crm/v1/x", tokens.access_token);
    expect(expired.status).toBe(401);
    expect(expired.headers.get("www-authenticate")).toBe('Bearer realm="relcast", error="invalid_token", error_description="the access token expired"');
    expect(await expired.json()).toEqual({ error: "invalid_token", error_description: "the access token expired" });

    const refreshed = await tokenRequest(h, refreshGrant(tokens.refresh_token));
    expect(refreshed.status).toBe(200);
    expect(refreshed.headers.get("cache-control")).toBe("no-store");
    const next = (await refreshed.json()) as Tokens;
    expect(next.refresh_token).not.toBe(tokens.refresh_token);
    expect((await callApi(h, "/v2/crm/v1/x", next.access_token)).status).toBe(200);
  });

  it("a reused refresh token is refused and revokes the whole family (RFC 9700)", async () => {
    const first = await tokensFor(h);
    const second = (await (await tokenRequest(h, refreshGrant(first.refresh_token))).json()) as Tokens;
    const reuse = await tokenRequest(h, refreshGrant(first.refresh_token));
    expect(reuse.status).toBe(400);
    expect(await reuse.json()).toMatchObject({ error: "invalid_grant" });
    expect((await callApi(h, "/v2/crm/v1/x", second.access_token)).status).toBe(401);
    const next = await tokenRequest(h, refreshGrant(second.refresh_token));
    expect(next.status).toBe(400);
    expect(await next.json()).toMatchObject({ error: "invalid_grant", error_description: "refresh token was revoked" });
  });

  it("refresh tokens expire after 30 days and must keep the authorized scope", async () => {
    const tokens = await tokensFor(h);
    const wrongScope = await tokenRequest(h, refreshGrant(tokens.refresh_token, "crm billing"));
    expect(await wrongScope.json()).toMatchObject({ error: "invalid_scope" });
    h.clock.advance(30 * 24 * 3600);
    const res = await tokenRequest(h, refreshGrant(tokens.refresh_token));
    expect(await res.json()).toMatchObject({ error: "invalid_grant", error_description: "refresh token expired" });
  });

  it("accepts form-encoded token requests and HTTP Basic client authentication", async () => {
    const code = await authorize(h);
    const { client_id: _id, client_secret: _secret, ...rest } = codeGrant(code);
    const res = await fetch(h.gateway.url + "/auth/oauth2/token", {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", authorization: "Basic " + Buffer.from(`${CLIENT.id}:${CLIENT.secret}`).toString("base64") },
      body: new URLSearchParams(rest).toString(),
    });
    expect(res.status).toBe(200);
    const form = await tokenRequest(h, refreshGrant(((await res.json()) as Tokens).refresh_token), "application/x-www-form-urlencoded");
    expect(form.status).toBe(200);
  });

  it("answers token errors in RFC 6749 §5.2 form", async () => {
    const wrongSecret = await tokenRequest(h, { ...codeGrant("rcc_x"), client_secret: "nope" });
    expect(wrongSecret.status).toBe(401);
    expect(await wrongSecret.json()).toEqual({ error: "invalid_client", error_description: "client authentication failed" });
    const grant = await tokenRequest(h, { ...codeGrant("rcc_x"), grant_type: "password" });
    expect(await grant.json()).toMatchObject({ error: "unsupported_grant_type" });
    const missing = await tokenRequest(h, { client_id: CLIENT.id, client_secret: CLIENT.secret, grant_type: "authorization_code", scope: "crm" });
    expect(missing.status).toBe(400);
    expect(await missing.json()).toMatchObject({ error: "invalid_request" });
    const bogus = await tokenRequest(h, codeGrant("rcc_not-a-code"));
    expect(await bogus.json()).toMatchObject({ error: "invalid_grant" });
    const text = await fetch(h.gateway.url + "/auth/oauth2/token", { method: "POST", headers: { "content-type": "text/plain" }, body: "x" });
    expect(await text.json()).toMatchObject({ error: "invalid_request" });
    const big = await tokenRequest(h, { ...codeGrant("x"), pad: "x".repeat(20_000) });
    expect(big.status).toBe(400);
  });

  it("rejects product calls without credentials, with a malformed header, or to unknown products", async () => {
    const none = await fetch(h.gateway.url + "/v2/crm/v1/x");
    expect(none.status).toBe(401);
    expect(none.headers.get("www-authenticate")).toContain('Bearer realm="relcast"');
    expect(none.headers.get("www-authenticate")).toContain("hmac realm");
    const malformed = await fetch(h.gateway.url + "/v2/crm/v1/x", { headers: { authorization: "Bearer a b c" } });
    expect(malformed.status).toBe(400);
    const unknown = await callApi(h, "/v2/nope/v1/x", "rca_x");
    expect(unknown.status).toBe(404);
    for (const target of ["/v2/crm/v1/%2e%2e/%2e%2e/hr/v1/x", "/v2/crm/v1/../../hr/v1/x", "/v2/crm/v1/a%2Fb", "/v2/crm/v1/a\\b"]) {
      expect((await rawRequest(h.gateway.url, target, { authorization: "Bearer rca_x" })).status).toBe(400);
    }
    const hmacOnly = await callApi(h, "/v2/hr/v1/people", (await tokensFor(h)).access_token);
    expect(hmacOnly.status).toBe(401);
    expect(hmacOnly.headers.get("www-authenticate")).toMatch(/^hmac /);
  });
});
