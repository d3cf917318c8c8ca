import { parseHttpDate } from "../core/http-date.js";
import { quoteForMessage } from "./plain-string.js";
import { failure, singleHeader, type RequestHeaders, type VerifyFailure } from "./verify-result.js";

export const DEFAULT_MAX_SKEW_SECONDS = 300;

/**
 * Checks `date-missing`, `date-format` and `date-skew`. As the HMAC scheme says (docs/hmac.md):
 * the difference must be *less than* 300 s, so exactly 300 s is refused
 * (Kong accepts a skew equal to its clock_skew setting).
 */
export function checkDate(
  headers: RequestHeaders,
  now: Date,
  maxSkewSeconds: number,
  expectedSigningString: (date: string) => string,
): { ok: true; date: string } | VerifyFailure {
  const value = singleHeader(headers, "date");
  if (value === undefined) {
    const hint = singleHeader(headers, "x-date") !== undefined ? "; X-Date is not a substitute" : "";
    return failure("date-missing", `the request has no Date header${hint}`);
  }
  if (value === null) return failure("date-missing", "the Date header was sent more than once");
  // The signing string the caller should have signed is built only for an answer that fails.
  const expected = () => ({ expectedSigningString: expectedSigningString(value) });
  const parsed = parseHttpDate(value);
  if (!parsed.ok) return failure("date-format", `the Date header ${quoteForMessage(value)} ${parsed.reason}`, expected());

  const skewMs = now.getTime() - parsed.date.getTime();
  if (!(Math.abs(skewMs) < maxSkewSeconds * 1000)) {
    const seconds = Math.abs(skewMs) / 1000;
    const direction = skewMs > 0 ? "behind" : "ahead of";
    return failure(
      "date-skew",
      `the Date header is ${formatSeconds(seconds)} ${direction} the verifier's clock; it must be less than ${maxSkewSeconds} s away (send the current UTC time and check the client's clock)`,
      expected(),
    );
  }
  return { ok: true, date: value };
}

function formatSeconds(seconds: number): string {
  return Number.isInteger(seconds) ? `${seconds} s` : `${seconds.toFixed(3)} s`;
}
