import * as oauth from "oauth4webapi";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { registerSecret } from "../helpers/secrets.js";
import { CLIENT, USER, startHarness, type Harness } from "./harness.js";
import { callApi, codeGrant, openConsent, readForm, submitForm, tokenRequest, tokensFor } from "./oauth-driver.js";

/**
 * Issue 25 items 1-3: PKCE (RFC 7636), revocation (RFC 7009) and discovery
 * (RFC 8414). The flows are driven by oauth4webapi, a strict client library
 * the project did not write, configured with nothing but the issuer URL.
 */
const noHmac = () => ({ ok: false as const, check: "signature", message: "unused" });
const PUBLIC = { id: "public-app", redirect: "http://127.0.0.1:9/callback" };
const insecure = { [oauth.allowInsecureRequests]: true } as const; // the test gateway is plain http on loopback

/** Plays the browser on /auth: approves and returns the URL the gateway redirected to. */
async function approve(h: Harness, authorizationUrl: URL): Promise<URL> {
  const form = await readForm(await fetch(authorizationUrl, { redirect: "manual" }));
  const res = await submitForm(h, form, { username: USER.name, password: USER.password, decision: "approve" });
  expect(res.status).toBe(303);
  return new URL(res.headers.get("location")!);
}

async function redirectedError(h: Harness, query: Record<string, string>): Promise<URLSearchParams> {
  const res = await openConsent(h, query);
  expect(res.status).toBe(303);
  return new URL(res.headers.get("location")!).searchParams;
}

describe("OAuth 2.0 current practice: PKCE, revocation, discovery", () => {
  let h: Harness;
  let issuer: URL;
  let as: oauth.AuthorizationServer;
  beforeAll(async () => {
    h = await startHarness(noHmac, (c) => {
      c.oauthClients!.push({ clientId: PUBLIC.id, name: "Public App", redirectUrl: PUBLIC.redirect, scopes: ["crm"] });
    });
    issuer = new URL(h.gateway.url);
    as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, { algorithm: "oauth2", ...insecure }));
  });
  afterAll(() => h.close());

  it("publishes RFC 8414 metadata naming the endpoints and what they accept", () => {
    expect(as).toMatchObject({
      issuer: h.gateway.url,
      authorization_endpoint: `${h.gateway.url}/auth`,
      token_endpoint: `${h.gateway.url}/auth/oauth2/token`,
      revocation_endpoint: `${h.gateway.url}/auth/oauth2/revoke`,
      response_types_supported: ["code"],
      grant_types_supported: ["authorization_code", "refresh_token"],
      code_challenge_methods_supported: ["S256"],
      token_endpoint_auth_methods_supported: expect.arrayContaining(["client_secret_basic", "client_secret_post", "none"]),
    });
  });

  it("oauth4webapi completes authorization code + PKCE, refresh and revocation from the metadata alone (confidential client)", async () => {
    const client: oauth.Client = { client_id: CLIENT.id };
    const auth = oauth.ClientSecretBasic(CLIENT.secret);
    const verifier = oauth.generateRandomCodeVerifier();
    const state = oauth.generateRandomState();
    const url = new URL(as.authorization_endpoint!);
    url.search = new URLSearchParams({
      client_id: CLIENT.id,
      response_type: "code",
      scope: "crm",
      redirect_uri: CLIENT.redirect,
      state,
      code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
      code_challenge_method: "S256",
    }).toString();
    const callback = await approve(h, url);
    expect(callback.searchParams.get("iss")).toBe(h.gateway.url);
    const params = oauth.validateAuthResponse(as, client, callback, state);
    const grant = await oauth.processAuthorizationCodeResponse(
      as,
      client,
      await oauth.authorizationCodeGrantRequest(as, client, auth, params, CLIENT.redirect, verifier, { additionalParameters: { scope: "crm" }, ...insecure }),
    );
    registerSecret(grant.access_token, grant.refresh_token!);
    expect(grant.token_type).toBe("bearer");
    expect((await callApi(h, "/v2/crm/v1/me", grant.access_token)).status).toBe(200);

    const refreshed = await oauth.processRefreshTokenResponse(
      as,
      client,
      await oauth.refreshTokenGrantRequest(as, client, auth, grant.refresh_token!, { additionalParameters: { scope: "crm" }, ...insecure }),
    );
    registerSecret(refreshed.access_token, refreshed.refresh_token!);
    expect((await callApi(h, "/v2/crm/v1/me", refreshed.access_token)).status).toBe(200);

    // Revoking the current refresh token revokes the whole family: the access token stops working too.
    await oauth.processRevocationResponse(await oauth.revocationRequest(as, client, auth, refreshed.refresh_token!, insecure));
    expect((await callApi(h, "/v2/crm/v1/me", refreshed.access_token)).status).toBe(401);
    const again = await tokenRequest(h, { client_id: CLIENT.id, client_secret: CLIENT.secret, grant_type: "refresh_token", refresh_token: refreshed.refresh_token!, scope: "crm" });
    expect(again.status).toBe(400);
    expect(await again.json()).toMatchObject({ error: "invalid_grant" });
  });

  it("a public client (no secret) completes the flow with PKCE and client_id only, and cannot skip PKCE", async () => {
    const client: oauth.Client = { client_id: PUBLIC.id, token_endpoint_auth_method: "none" };
    const verifier = oauth.generateRandomCodeVerifier();
    const url = new URL(as.authorization_endpoint!);
    url.search = new URLSearchParams({
      client_id: PUBLIC.id,
      response_type: "code",
      scope: "crm",
      code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
      code_challenge_method: "S256",
    }).toString();
    const params = oauth.validateAuthResponse(as, client, await approve(h, url), oauth.expectNoState);
    const grant = await oauth.processAuthorizationCodeResponse(
      as,
      client,
      await oauth.authorizationCodeGrantRequest(as, client, oauth.None(), params, PUBLIC.redirect, verifier, { additionalParameters: { scope: "crm" }, ...insecure }),
    );
    registerSecret(grant.access_token, grant.refresh_token!);
    expect((await callApi(h, "/v2/crm/v1/me", grant.access_token)).status).toBe(200);
    // Access-token revocation by the public client revokes the family as well.
    await oauth.processRevocationResponse(await oauth.revocationRequest(as, client, oauth.None(), grant.access_token, insecure));
    expect((await callApi(h, "/v2/crm/v1/me", grant.access_token)).status).toBe(401);

    const withoutPkce = await redirectedError(h, { client_id: PUBLIC.id, response_type: "code", scope: "crm" });
    expect(withoutPkce.get("error")).toBe("invalid_request");
    expect(withoutPkce.get("error_description")).toMatch(/public client and must use PKCE/);
    // A public client may not present a secret, and an unknown one gets invalid_client.
    expect((await tokenRequest(h, { client_id: PUBLIC.id, client_secret: "guess-guess-guess", grant_type: "refresh_token", refresh_token: "x", scope: "crm" })).status).toBe(401);
  });

  it("refuses plain, a missing method and malformed challenges at /auth", async () => {
    const base = { client_id: CLIENT.id, response_type: "code", scope: "crm", state: "s" };
    const challenge = await oauth.calculatePKCECodeChallenge(oauth.generateRandomCodeVerifier());
    const cases: Record<string, string>[] = [
      { code_challenge: challenge, code_challenge_method: "plain" },
      { code_challenge: challenge },
      { code_challenge: "short", code_challenge_method: "S256" },
      { code_challenge_method: "S256" },
    ];
    for (const extra of cases) {
      const params = await redirectedError(h, { ...base, ...extra });
      expect(params.get("error")).toBe("invalid_request");
      expect(params.get("state")).toBe("s");
    }
  });

  it("a code issued with a code_challenge needs the matching code_verifier (invalid_grant otherwise), and a verifier needs a challenge", async () => {
    const verifier = oauth.generateRandomCodeVerifier();
    const challenge = await oauth.calculatePKCECodeChallenge(verifier);
    const code = await codeFor(h, { code_challenge: challenge, code_challenge_method: "S256" });
    const wrong: Record<string, string>[] = [{}, { code_verifier: oauth.generateRandomCodeVerifier() }, { code_verifier: challenge }, { code_verifier: "too-short" }];
    for (const extra of wrong) {
      const res = await tokenRequest(h, { ...codeGrant(code), ...extra });
      expect(res.status).toBe(400);
      expect(await res.json()).toMatchObject({ error: "invalid_grant" });
    }
    expect((await tokenRequest(h, { ...codeGrant(code), code_verifier: verifier })).status).toBe(200);
    const plainCode = await codeFor(h, {});
    const downgrade = await tokenRequest(h, { ...codeGrant(plainCode), code_verifier: verifier });
    expect(downgrade.status).toBe(400);
    expect(await downgrade.json()).toMatchObject({ error: "invalid_grant" });
  });

  it("revocation: client-authenticated, 200 for unknown tokens, no effect on another client's tokens", async () => {
    const tokens = await tokensFor(h);
    const revoke = (body: Record<string, string>, headers: Record<string, string> = {}) =>
      fetch(as.revocation_endpoint!, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded", ...headers }, body: new URLSearchParams(body) });
    const unauthenticated = await revoke({ token: tokens.access_token });
    expect(unauthenticated.status).toBe(401);
    expect(await unauthenticated.json()).toMatchObject({ error: "invalid_client" });
    const wrongSecret = await revoke({ token: tokens.access_token, client_id: CLIENT.id, client_secret: "not-the-secret" });
    expect(wrongSecret.status).toBe(401);
    expect((await revoke({ token: "rca_unknown", client_id: CLIENT.id, client_secret: CLIENT.secret })).status).toBe(200);
    expect((await revoke({ token: tokens.access_token, client_id: PUBLIC.id })).status).toBe(200);
    expect((await callApi(h, "/v2/crm/v1/me", tokens.access_token)).status).toBe(200);
    expect((await revoke({ token: tokens.access_token, token_type_hint: "refresh_token", client_id: CLIENT.id, client_secret: CLIENT.secret })).status).toBe(200);
    expect((await callApi(h, "/v2/crm/v1/me", tokens.access_token)).status).toBe(401);
    expect((await revoke({ client_id: CLIENT.id, client_secret: CLIENT.secret })).status).toBe(400);
  });
});

async function codeFor(h: Harness, extra: Record<string, string>): Promise<string> {
  const form = await readForm(await openConsent(h, { client_id: CLIENT.id, response_type: "code", scope: "crm", ...extra }));
  const res = await submitForm(h, form, { username: USER.name, password: USER.password, decision: "approve" });
  return new URL(res.headers.get("location")!).searchParams.get("code")!;
}
