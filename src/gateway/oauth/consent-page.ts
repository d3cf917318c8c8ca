import { escapeHtml } from "../../core/html-escape.js";
import { scopeProduct } from "../scope-set.js";

/**
 * The sign-in and consent page: a plain HTML form posting `username`,
 * `password`, `decision=approve|deny` and the hidden sealed `request`.
 */
export interface ConsentPageInput {
  clientName: string;
  scopes: readonly string[];
  sealedRequest: string;
  username?: string;
  error?: string;
}

export function describeScope(scope: string): string {
  const product = scopeProduct(scope);
  return scope.endsWith(":read") ? `read the ${product} API on your behalf` : `read and change data through the ${product} API on your behalf`;
}

export function renderConsentPage(input: ConsentPageInput): string {
  const items = input.scopes.map((s) => `<li><code>${escapeHtml(s)}</code>: ${escapeHtml(describeScope(s))}</li>`).join("\n      ");
  const error = input.error ? `<p class="error" role="alert">${escapeHtml(input.error)}</p>` : "";
  return page(
    "Authorize application",
    `<h1>Sign in to authorize ${escapeHtml(input.clientName)}</h1>
    ${error}
    <p><strong>${escapeHtml(input.clientName)}</strong> asks to:</p>
    <ul>
      ${items}
    </ul>
    <form method="post" action="/auth">
      <input type="hidden" name="request" value="${escapeHtml(input.sealedRequest)}">
      <label>User name <input name="username" autocomplete="username" value="${escapeHtml(input.username ?? "")}"></label>
      <label>Password <input name="password" type="password" autocomplete="current-password"></label>
      <button type="submit" name="decision" value="approve">Approve</button>
      <button type="submit" name="decision" value="deny">Deny</button>
    </form>`,
  );
}

/** Shown when the request cannot be redirected back (unknown client, wrong redirect, expired form). */
export function renderErrorPage(title: string, detail: string): string {
  return page(title, `<h1>${escapeHtml(title)}</h1>\n    <p>${escapeHtml(detail)}</p>`);
}

function page(title: string, body: string): string {
  return `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8">
    <meta name="viewport" content="width=device-width, initial-scale=1">
    <title>${escapeHtml(title)}</title>
    <style>body{font-family:system-ui,sans-serif;max-width:32rem;margin:3rem auto;padding:0 1rem}label{display:block;margin:.5rem 0}.error{color:#b00020}</style>
  </head>
  <body>
    ${body}
  </body>
</html>
`;
}
