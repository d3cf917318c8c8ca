import type { IncomingMessage, ServerResponse } from "node:http";
import type { TLSSocket } from "node:tls";
import type { Clock } from "../clock.js";
import type { OAuthClientConfig, UserConfig } from "../config-schema.js";
import { HttpError } from "../http/http-error.js";
import { readBoundedBody } from "../http/read-body.js";
import { redirect, sendHtml } from "../http/respond.js";
import { parseScope } from "../scope-set.js";
import { verifyAgainstDummy, verifySecret } from "../secret-hash.js";
import type { TokenStore } from "../state/token-store.js";
import { checkAuthorizeQuery, redirectWith } from "./authorize-request.js";
import { clearConsentCookie, consentCookie, consentCookieName, readCookie, type ConsentSeal } from "./consent-csrf.js";
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
}

export function authorizeEndpoint(options: AuthorizeOptions) {
  return async (req: IncomingMessage, res: ServerResponse, query: URLSearchParams): Promise<void> => {
    if (req.method === "GET" || req.method === "HEAD") return showForm(options, req, res, query);
    if (req.method === "POST") return decide(options, req, res);
    req.resume();
    sendHtml(res, 405, renderErrorPage("Method not allowed", "Use GET or POST."), { allow: "GET, HEAD, POST" });
  };
}

function isSecure(req: IncomingMessage): boolean {
  return (req.socket as TLSSocket).encrypted === true || req.headers["x-forwarded-proto"] === "https";
}

function showForm(options: AuthorizeOptions, req: IncomingMessage, res: ServerResponse, query: URLSearchParams): void {
  const check = checkAuthorizeQuery(query, options.clients);
  if (check.kind === "show") return sendHtml(res, 400, renderErrorPage(check.title, check.detail));
  if (check.kind === "redirect") return redirect(res, check.location);
  const { field, nonce } = options.seal.seal(check.request, options.clock());
  const html = renderConsentPage({ clientName: check.client.name ?? check.client.clientId, scopes: check.scopes, sealedRequest: field });
  sendHtml(res, 200, html, { "set-cookie": consentCookie(nonce, isSecure(req)) });
}

async function decide(options: AuthorizeOptions, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const type = (req.headers["content-type"] ?? "").split(";")[0]!.trim().toLowerCase();
  if (type !== "application/x-www-form-urlencoded") {
    req.resume();
    return sendHtml(res, 415, renderErrorPage("Unsupported form", "The sign-in form must be posted as application/x-www-form-urlencoded."));
  }
  let body: Buffer;
  try {
    body = await readBoundedBody(req, options.maxBodyBytes);
  } catch (err) {
    if (err instanceof HttpError) return sendHtml(res, err.status, renderErrorPage("Form too large", err.description), err.headers);
    throw err;
  }
  const form = new URLSearchParams(body.toString("utf8"));
  const now = options.clock();
  const sealed = options.seal.open(form.get("request") ?? "", now);
  const client = sealed && options.clients.get(sealed.clientId);
  if (!sealed || !client) {
    return sendHtml(res, 400, renderErrorPage("Sign-in form expired", "This form has expired or was altered. Start again from the application."));
  }
  const cookie = readCookie(req.headers.cookie, consentCookieName(sealed.nonce));
  if (!cookie || cookie !== sealed.nonce) {
    return sendHtml(res, 403, renderErrorPage("Request refused", "The form was not submitted from this browser's sign-in page. Start again from the application."));
  }
  const decision = form.get("decision");
  const finish = (params: Record<string, string | undefined>) =>
    redirect(res, redirectWith(client.redirectUrl, { ...params, state: sealed.state }), { "set-cookie": clearConsentCookie(sealed.nonce) });
  const alreadyUsed = () => sendHtml(res, 400, renderErrorPage("Form already used", "This sign-in form was already submitted. Start again from the application."));
  if (decision === "deny") {
    if (!options.store.useConsentNonce(sealed.nonce, sealed.exp)) return alreadyUsed();
    return finish({ error: "access_denied", error_description: "the user denied the request" });
  }
  if (decision !== "approve") return sendHtml(res, 400, renderErrorPage("Invalid form", "decision must be approve or deny."));

  const username = form.get("username") ?? "";
  const password = form.get("password") ?? "";
  const again = (status: number, error: string, headers: Record<string, string> = {}) => {
    const scopes = parseScope(sealed.scope) ?? [];
    const html = renderConsentPage({ clientName: client.name ?? client.clientId, scopes, sealedRequest: form.get("request")!, username, error });
    sendHtml(res, status, html, headers);
  };
  const wait = options.throttle.retryAfter(username);
  if (wait > 0) return again(429, "Too many failed sign-ins for this user name. Try again later.", { "retry-after": String(wait) });
  const user = options.users.get(username);
  const ok = user ? await verifySecret(password, user.passwordHash) : await verifyAgainstDummy(password);
  if (!user || !ok) {
    options.throttle.fail(username);
    return again(200, "Unknown user name or wrong password.");
  }
  options.throttle.succeed(username);
  if (!options.store.useConsentNonce(sealed.nonce, sealed.exp)) return alreadyUsed();
  const code = options.store.issueCode({
    clientId: client.clientId,
    username: user.username,
    scope: sealed.scope,
    redirectUrl: client.redirectUrl,
    redirectSent: sealed.redirectUri !== undefined,
  });
  finish({ code });
}
