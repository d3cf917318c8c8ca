import { registerSecret } from "../helpers/secrets.js";
import { expect } from "vitest";
import type { Harness } from "./harness.js";
import { CLIENT, USER } from "./harness.js";

/**
 * Plays the browser: opens /auth, reads the hidden sealed request and the
 * CSRF cookie, posts the form, and returns where the gateway redirected to.
 */
export interface ConsentForm {
  request: string;
  cookie: string;
  html: string;
}

export async function openConsent(h: Harness, query: Record<string, string>): Promise<Response> {
  const url = new URL(h.gateway.url + "/auth");
  for (const [k, v] of Object.entries(query)) url.searchParams.set(k, v);
  return fetch(url, { redirect: "manual" });
}

export async function readForm(response: Response): Promise<ConsentForm> {
  expect(response.status).toBe(200);
  const html = await response.text();
  const request = /name="request" value="([^"]+)"/.exec(html)?.[1];
  const cookie = response.headers.get("set-cookie")?.split(";")[0];
  if (!request || !cookie) throw new Error("consent page lacks the hidden request or the cookie");
  return { request: request.replace(/&#(\d+);/g, (_m, c: string) => String.fromCharCode(Number(c))), cookie, html };
}

export async function submitForm(h: Harness, form: ConsentForm, fields: Record<string, string>, cookie = form.cookie): Promise<Response> {
  return fetch(h.gateway.url + "/auth", {
    method: "POST",
    redirect: "manual",
    headers: { "content-type": "application/x-www-form-urlencoded", ...(cookie ? { cookie } : {}) },
    body: new URLSearchParams({ request: form.request, ...fields }).toString(),
  });
}

/** Full sign-in and approval; returns the authorization code. */
export async function authorize(h: Harness, scope = "crm", extra: Record<string, string> = {}): Promise<string> {
  const form = await readForm(await openConsent(h, { client_id: CLIENT.id, response_type: "code", scope, state: "st-1", ...extra }));
  const res = await submitForm(h, form, { username: USER.name, password: USER.password, decision: "approve" });
  expect(res.status).toBe(303);
  const location = new URL(res.headers.get("location")!);
  expect(location.searchParams.get("state")).toBe("st-1");
  return location.searchParams.get("code")!;
}

export async function tokenRequest(h: Harness, body: Record<string, string>, contentType = "application/json"): Promise<Response> {
  const payload = contentType === "application/json" ? JSON.stringify(body) : new URLSearchParams(body).toString();
  return fetch(h.gateway.url + "/auth/oauth2/token", { method: "POST", headers: { "content-type": contentType }, body: payload });
}

export function codeGrant(code: string, scope = "crm"): Record<string, string> {
  return { client_id: CLIENT.id, client_secret: CLIENT.secret, grant_type: "authorization_code", code, scope };
}

export function refreshGrant(refreshToken: string, scope = "crm"): Record<string, string> {
  return { client_id: CLIENT.id, client_secret: CLIENT.secret, grant_type: "refresh_token", refresh_token: refreshToken, scope };
}

export interface Tokens {
  access_token: string;
  refresh_token: string;
  expires_in: number;
  token_type: string;
}

export async function tokensFor(h: Harness, scope = "crm"): Promise<Tokens> {
  const res = await tokenRequest(h, codeGrant(await authorize(h, scope), scope));
  expect(res.status).toBe(200);
  const tokens = (await res.json()) as Tokens;
  registerSecret(tokens.access_token, tokens.refresh_token);
  return tokens;
}

export function callApi(h: Harness, path: string, accessToken: string, init: RequestInit = {}): Promise<Response> {
  return fetch(h.gateway.url + path, { ...init, headers: { ...(init.headers as Record<string, string>), authorization: `Bearer ${accessToken}` } });
}
