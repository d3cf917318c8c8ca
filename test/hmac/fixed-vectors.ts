/**
 * Signing vectors written out by hand and computed independently of relcast
 * (Python 3 `hmac`/`hashlib`/`base64`; V1 also with `openssl dgst -hmac`).
 * The tests also recompute them with Python at run time.
 */
export type Vector = {
  name: string;
  clientId: string;
  secret: string;
  date: string;
  method: string;
  target: string;
  body?: string;
  signature: string;
  digest?: string;
};

export const DATE = "Tue, 07 Jan 2025 10:00:00 GMT";

export const VECTORS: readonly Vector[] = [
  { name: "GET with a query kept in sent order", clientId: "client-1", secret: "topsecret-123", date: DATE, method: "GET", target: "/v2/crm/v1/items?b=2&a=1", signature: "4D64mbZ72fhq4FjVqtJ6/FG7+o+X8rg8eKjhDQqvNh8=" },
  { name: "POST with a JSON body", clientId: "client-1", secret: "topsecret-123", date: DATE, method: "POST", target: "/v2/crm/v1/items", body: '{"a":1}', signature: "9J1u4v+QGC6v72e3LNKO/v2LxI+3U7uYNBtSLOBcGsQ=", digest: "SHA-256=AVq9f1zFei3ZS3WQ8ErYCEJzkF7jPsXOvq5iJ2qX+GI=" },
  { name: "PUT with a UTF-8 secret and an encoded space", clientId: "client-2", secret: "sécret-ü-42", date: "Sun, 06 Nov 1994 08:49:37 GMT", method: "PUT", target: "/v2/acct/v1/ledger/7?x=%20y", body: "", signature: "pw2WfSHoB34l9hkKQtdltZUbSRvJQ+ffli26P+ln1VM=", digest: "SHA-256=47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=" },
  { name: "PATCH with repeated query keys and a UTF-8 body", clientId: "client-3", secret: "k3y-with-symbols!@#", date: "Fri, 28 Feb 2025 23:59:59 GMT", method: "PATCH", target: "/v2/x/v1/search?q=caf%C3%A9&sort=-date&q=2", body: "héllo wörld\n", signature: "guqufrK2ZQfjeLrGpnWbiW78JItky8hEE2NFh1iVCV8=", digest: "SHA-256=OCju7pdKp0hueswljlxzoBFeFoRE1miN641dEwbR9X0=" },
  { name: "DELETE without a body still has a Digest", clientId: "client-1", secret: "topsecret-123", date: DATE, method: "DELETE", target: "/v2/crm/v1/items/42", signature: "EsblDb9CNTqYpOH3JqzG79d67iAXO83R2iJt6XQ7V3g=", digest: "SHA-256=47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=" },
];

/** V1 signed over the deprecated request-line without the query (Python). */
export const DEPRECATED_V1_SIGNATURE = "BnbRS0yFaTWz9eSKS+XtZeUkREPEh9h6RXID16UYerE=";
/** V1 signed with HTTP/1.0 in the request-line (Python). */
export const HTTP10_V1_SIGNATURE = "qQzOqbRNjtHVeOyidxKUG9Fav9tbxnbcxVKPqGJ5lag=";
/** SHA-256 digest of `{"a": 1}` (with a space), what a re-serialised body gives (Python). */
export const RESERIALISED_DIGEST = "SHA-256=+dhgKMbg1k4iUYb5astpM4ssWXZN95FiEH9cS7NNExA=";

export function authorizationFor(clientId: string, signature: string): string {
  return `hmac username="${clientId}", algorithm="hmac-sha256", headers="date request-line", signature="${signature}"`;
}
