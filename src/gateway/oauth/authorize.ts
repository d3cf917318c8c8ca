import type { Context } from "hono";
import { deleteCookie, getCookie, setCookie } from "hono/cookie";
import type { IncomingMessage } from "node:http";
import type { Clock } from "../clock.js";
import type { OAuthClientConfig, UserConfig } from "../config-schema.js";
import { holdAnswer } from "../http/answer-hold.js";
import { HttpError } from "../http/http-error.js";
import type { GatewayEnv } from "../http/middleware.js";
import { readBoundedBody } from "../http/read-body.js";
import { htmlResponse, redirectResponse } from "../http/respond.js";
import { parseScope } from "../scope-set.js";
import { verifyAgainstDummy, verifySecret } from "../secret-hash.js";
import type { TokenStore } from "../state/token-store.js";
import { checkAuthorizeQuery, redirectWith } from "./authorize-request.js";
import { CONSENT_COOKIE, consentCookieName, type ConsentSeal } from "./consent-csrf.js";
import { renderConsentPage, renderErrorPage } from "./consent-page.js";
import type { SignInThrottle } from "./sign-in-throttle.js";

/** `GET /auth` shows the sign-in and consent form; `POST /auth` decides it. */
export interface AuthorizeOptions {
  store: TokenStore;
  seal: ConsentSeal;
  clock: Clock;
  clients: ReadonlyMap<string, OAuthClientConfig>;
  users: ReadonlyMap<string, UserConfig>;
  throttle: SignInThrottle;
  maxBodyBytes: number;
  /** TLS here, or a trusted proxy says so: the consent cookie is then `Secure`. */
  isHttps: (req: IncomingMessage) => boolean;
  /** The issuer identifier for this request (RFC 8414), added to every redirect as `iss` (RFC 9207). */
  issuer: (c: Context<GatewayEnv>) => string;
}

type C = Context<GatewayEnv>;

export function authorizeEndpoint(options: AuthorizeOptions) {
  return async (c: C): Promise<Response> => {
    const method = c.req.method;
    if (method === "GET" || method === "HEAD") return showForm(options, c);
    if (method === "POST") return decide(options, c);
    return htmlResponse(c, 405, renderErrorPage("Method not allowed", "Use GET or POST."), { allow: "GET, HEAD, POST" });
  };
}

function showForm(options: AuthorizeOptions, c: C): Response {
  const target = c.env.incoming.url ?? "";
  const q = target.indexOf("?");
  const check = checkAuthorizeQuery(new URLSearchParams(q < 0 ? "" : target.slice(q + 1)), options.clients, options.issuer(c));
  if (check.kind === "show") return htmlResponse(c, 400, renderErrorPage(check.title, check.detail));
  if (check.kind === "redirect") return redirectResponse(c, check.location);
  const { field, nonce } = options.seal.seal(check.request, options.clock());
  const html = renderConsentPage({ clientName: check.client.name ?? check.client.clientId, scopes: check.scopes, sealedRequest: field });
  setCookie(c, consentCookieName(nonce), nonce, { ...CONSENT_COOKIE, secure: options.isHttps(c.env.incoming) });
  return htmlResponse(c, 200, html);
}

async function decide(options: AuthorizeOptions, c: C): Promise<Response> {
  const type = (c.req.header("content-type") ?? "").split(";")[0]!.trim().toLowerCase();
  if (type !== "application/x-www-form-urlencoded") {
    return htmlResponse(c, 415, renderErrorPage("Unsupported form", "The sign-in form must be posted as application/x-www-form-urlencoded."));
  }
  let body: Buffer;
  try {
    body = await readBoundedBody(c, options.maxBodyBytes);
  } catch (err) {
    if (err instanceof HttpError) return htmlResponse(c, err.status, renderErrorPage("Form too large", err.description), err.headers);
    throw err;
  }
  const form = new URLSearchParams(body.toString("utf8"));
  const now = options.clock();
  const sealed = options.seal.open(form.get("request") ?? "", now);
  const client = sealed && options.clients.get(sealed.clientId);
  if (!sealed || !client) {
    return htmlResponse(c, 400, renderErrorPage("Sign-in form expired", "This form has expired or was altered. Start again from the application."));
  }
  const cookieName = consentCookieName(sealed.nonce);
  const cookie = getCookie(c, cookieName);
  if (!cookie || cookie !== sealed.nonce) {
    return htmlResponse(c, 403, renderErrorPage("Request refused", "The form was not submitted from this browser's sign-in page. Start again from the application."));
  }
  // From here the state may change (a sign-in attempt, a used form, a code): a shutdown lets this answer finish.
  holdAnswer(c.env.outgoing);
  const decision = form.get("decision");
  const finish = (params: Record<string, string | undefined>) => {
    deleteCookie(c, cookieName, { path: CONSENT_COOKIE.path, httpOnly: true, sameSite: "Strict" });
    return redirectResponse(c, redirectWith(client.redirectUrl, { ...params, state: sealed.state, iss: options.issuer(c) }));
  };
  const alreadyUsed = () => htmlResponse(c, 400, renderErrorPage("Form already used", "This sign-in form was already submitted. Start again from the application."));
  if (decision === "deny") {
    if (!(await options.store.useConsentNonce(sealed.nonce, sealed.exp))) return alreadyUsed();
    return finish({ error: "access_denied", error_description: "the user denied the request" });
  }
  if (decision !== "approve") return htmlResponse(c, 400, renderErrorPage("Invalid form", "decision must be approve or deny."));

  const username = form.get("username") ?? "";
  const password = form.get("password") ?? "";
  const again = (status: number, error: string, headers: Record<string, string> = {}) => {
    const scopes = parseScope(sealed.scope) ?? [];
    const html = renderConsentPage({ clientName: client.name ?? client.clientId, scopes, sealedRequest: form.get("request")!, username, error });
    return htmlResponse(c, status, html, headers);
  };
  // Reserved before the (asynchronous) password check, so attempts arriving together are counted one by one.
  const attempt = await options.throttle.reserve(username);
  if (!attempt.ok) return again(429, "Too many failed sign-ins for this user name. Try again later.", { "retry-after": String(attempt.retryAfterSeconds) });
  const user = options.users.get(username);
  const ok = user ? await verifySecret(password, user.passwordHash) : await verifyAgainstDummy(password);
  // A wrong password keeps its reservation.
  if (!user || !ok) return again(200, "Unknown user name or wrong password.");
  await options.throttle.succeeded(username);
  if (!(await options.store.useConsentNonce(sealed.nonce, sealed.exp))) return alreadyUsed();
  const code = await options.store.issueCode({
    clientId: client.clientId,
    username: user.username,
    scope: sealed.scope,
    redirectUrl: client.redirectUrl,
    redirectSent: sealed.redirectUri !== undefined,
    codeChallenge: sealed.codeChallenge,
  });
  return finish({ code });
}
