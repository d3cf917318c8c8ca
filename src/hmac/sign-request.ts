import { z } from "zod";
import { describeZodIssues } from "../core/zod-message.js";
import { RelcastError } from "../core/errors.js";
import { clientIdProblem, formatAuthorization } from "./authorization-header.js";
import { digestHeaderValue, requiresDigest } from "./body-digest.js";
import { formatHttpDate, parseHttpDate } from "../core/http-date.js";
import { resolveRequestTarget } from "./request-target.js";
import { buildSigningString, computeSignature } from "./signing-string.js";

const HTTP_TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

export const signRequestInputSchema = z.object({
  clientId: z.string().superRefine((id, ctx) => {
    const problem = clientIdProblem(id);
    if (problem) ctx.addIssue({ code: "custom", message: `${problem}; it must be printable ASCII without " or \\` });
  }),
  secret: z.string().min(1, "is empty"),
  method: z.string().regex(HTTP_TOKEN, "must be an HTTP method such as GET or POST"),
  /** A path with query exactly as sent (`/v2/x?b=2&a=1`) or an absolute http(s) URL. */
  url: z.string().min(1, "is empty"),
  body: z.union([z.string(), z.custom<Uint8Array>((v) => v instanceof Uint8Array, "must be a string or bytes")]).optional(),
  /** A Date, or an IMF-fixdate string used verbatim; defaults to now. */
  date: z.union([z.date(), z.string()], { error: "must be a valid Date or an IMF-fixdate string" }).optional(),
});

export type SignRequestInput = z.input<typeof signRequestInputSchema>;

export type SignedRequest = {
  headers: { Date: string; Digest?: string; Authorization: string };
  method: string;
  requestTarget: string;
  /** Set when an absolute URL was given whose raw path differs from what fetch sends. */
  rewrittenFrom?: string;
  signingString: string;
};

/**
 * Signs a request as the HMAC scheme says (docs/hmac.md) and returns the Date, Digest (for POST,
 * PUT, PATCH, DELETE, or whenever a body is given) and Authorization headers.
 * The method is upper-cased; the path and query are used exactly as given.
 */
export function signRequest(input: SignRequestInput): SignedRequest {
  const parsed = signRequestInputSchema.safeParse(input);
  if (!parsed.success) {
    throw new RelcastError("E_INPUT", describeZodIssues(parsed.error, "hmac sign"), "fix the named field and sign again");
  }
  const { clientId, secret, url, body } = parsed.data;
  const method = parsed.data.method.toUpperCase();

  const target = resolveRequestTarget(url);
  if (!target.ok) throw new RelcastError("E_INPUT", `hmac sign: url: ${target.message}`, "pass the path?query exactly as it will be sent");

  const date = resolveDate(parsed.data.date);
  const signingString = buildSigningString(date, method, target.value.target);
  const hasBody = body !== undefined && body.length > 0;
  const digest = requiresDigest(method) || hasBody ? { Digest: digestHeaderValue(body) } : {};
  const authorization = formatAuthorization(clientId, computeSignature(secret, signingString));
  const headers: SignedRequest["headers"] = { Date: date, ...digest, Authorization: authorization };

  const signed: SignedRequest = { headers, method, requestTarget: target.value.target, signingString };
  if (target.value.rewrittenFrom !== undefined) signed.rewrittenFrom = target.value.rewrittenFrom;
  return signed;
}

function resolveDate(date: Date | string | undefined): string {
  if (date === undefined) return formatHttpDate(new Date());
  if (date instanceof Date) return formatHttpDate(date);
  const parsed = parseHttpDate(date);
  if (!parsed.ok) {
    throw new RelcastError("E_INPUT", `hmac sign: date ${JSON.stringify(date.slice(0, 64))} ${parsed.reason}`, `for example: ${formatHttpDate(new Date())}`);
  }
  return date;
}
