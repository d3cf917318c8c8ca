import { ALGORITHM, parseAuthorization, SIGNED_HEADERS, type AuthorizationParams } from "./authorization-header.js";
import { quoteForMessage } from "./plain-string.js";
import { failure, singleHeader, type RequestHeaders, type VerifyFailure } from "./verify-result.js";

/** Checks `authorization-grammar`, `algorithm` and `headers`, in that order. */
export function checkAuthorization(headers: RequestHeaders): { ok: true; params: AuthorizationParams } | VerifyFailure {
  const raw = singleHeader(headers, "authorization");
  if (raw === undefined) return failure("authorization-grammar", "the request has no Authorization header");
  if (raw === null) return failure("authorization-grammar", "the Authorization header was sent more than once");
  const parsed = parseAuthorization(raw);
  if (!parsed.ok) return failure("authorization-grammar", parsed.message);
  const { params } = parsed;
  const clientId = params.username;

  if (params.algorithm !== ALGORITHM) {
    const hint = params.algorithm.toLowerCase() === ALGORITHM ? " (lower case)" : "; no other algorithm is accepted";
    return failure("algorithm", `algorithm must be "${ALGORITHM}"${hint}, got ${quoteForMessage(params.algorithm)}`, { clientId });
  }
  if (params.headers !== SIGNED_HEADERS) {
    return failure("headers", `headers must be exactly "${SIGNED_HEADERS}"${headersHint(params.headers)}, got ${quoteForMessage(params.headers)}`, { clientId });
  }
  return { ok: true, params };
}

function headersHint(value: string): string {
  const names = value.split(/\s+/).filter(Boolean).map((n) => n.toLowerCase());
  if (names.join(" ") === SIGNED_HEADERS) return " (lower case, one space between the names)";
  if (names.join(" ") === "request-line date") return " (date first, then request-line)";
  if (names.includes("x-date")) return " (relcast signs the Date header; x-date is not used)";
  if (!names.includes("request-line")) return " (the request-line must be signed)";
  return "";
}
