import { describeChar, firstNonPlainChar, isPlainStringChar, quoteForMessage } from "./plain-string.js";

/**
 * Parser and formatter for the Authorization header grammar of the HMAC scheme (docs/hmac.md):
 *
 *   hmac username="<id>", algorithm="hmac-sha256", headers="date request-line", signature="<b64>"
 *
 * The scheme and parameter names are matched case-insensitively (RFC 7235
 * and ABNF literals); separators, order and quoting are exact. Values are
 * returned untouched; what they must be is checked by the verifier so that
 * each problem gets its own named check.
 */
export const PARAM_ORDER = ["username", "algorithm", "headers", "signature"] as const;
export type ParamName = (typeof PARAM_ORDER)[number];
export type AuthorizationParams = Record<ParamName, string>;

export type ParseAuthorizationResult =
  | { ok: true; params: AuthorizationParams }
  | { ok: false; message: string };

export const MAX_AUTHORIZATION_LENGTH = 4096;
export const SIGNED_HEADERS = "date request-line";
export const ALGORITHM = "hmac-sha256";

export function formatAuthorization(username: string, signature: string): string {
  return `hmac username="${username}", algorithm="${ALGORITHM}", headers="${SIGNED_HEADERS}", signature="${signature}"`;
}

const fail = (message: string): ParseAuthorizationResult => ({ ok: false, message });

/**
 * The header as formatAuthorization writes it (the scheme in any case): the
 * form nearly every request has, matched by one regex instead of the
 * character loop below, with the same result (the loop takes exactly these
 * strings, and these parameters, in this order, with these names).
 */
const CANONICAL = /^[Hh][Mm][Aa][Cc] username="([ !#-[\]-~]*)", algorithm="([ !#-[\]-~]*)", headers="([ !#-[\]-~]*)", signature="([ !#-[\]-~]*)"$/;

export function parseAuthorization(raw: string): ParseAuthorizationResult {
  const value = trimSpaceAndTab(raw);
  if (value.length === 0) return fail("the Authorization header is empty");
  if (value.length > MAX_AUTHORIZATION_LENGTH) {
    return fail(`the Authorization header is ${value.length} characters long; the limit is ${MAX_AUTHORIZATION_LENGTH}`);
  }
  const canonical = CANONICAL.exec(value);
  if (canonical) return { ok: true, params: { username: canonical[1]!, algorithm: canonical[2]!, headers: canonical[3]!, signature: canonical[4]! } };
  return parseByCharacters(value);
}

/** The general parser, on a trimmed header within the length limit; exported so the tests hold CANONICAL to it. */
export function parseByCharacters(value: string): ParseAuthorizationResult {
  const space = value.indexOf(" ");
  const scheme = space < 0 ? value : value.slice(0, space);
  if (scheme.toLowerCase() !== "hmac") return fail(`the scheme must be "hmac", got ${quoteForMessage(scheme)}`);
  if (space < 0) return fail('"hmac" must be followed by one space and the parameters');

  const found: Array<[string, string]> = [];
  let i = space + 1;
  for (;;) {
    const nameStart = i;
    while (i < value.length && isNameChar(value.charCodeAt(i))) i++;
    const name = value.slice(nameStart, i);
    if (name.length === 0) {
      const what = i < value.length ? `found ${describeAt(value, i)}` : "the header ends";
      return fail(`expected a parameter name at column ${i + 1}, but ${what}`);
    }
    if (value[i] !== "=") return fail(`parameter ${quoteForMessage(name)} must be followed by "=" at column ${i + 1}`);
    if (value[i + 1] !== '"') return fail(`the value of ${quoteForMessage(name)} must be in double quotes (column ${i + 2})`);
    i += 2;
    const valueStart = i;
    while (i < value.length && isPlainStringChar(value.charCodeAt(i))) i++;
    if (i >= value.length) return fail(`the value of ${quoteForMessage(name)} has no closing double quote`);
    if (value[i] !== '"') {
      return fail(`the value of ${quoteForMessage(name)} contains ${describeChar(value, i)} at column ${i + 1}`);
    }
    found.push([name, value.slice(valueStart, i)]);
    i++;
    if (i === value.length) break;
    if (value[i] !== "," || value[i + 1] !== " " || value[i + 2] === " " || value[i + 2] === "\t") {
      return fail(`parameters must be separated by a comma and exactly one space (column ${i + 1})`);
    }
    i += 2;
  }
  // The usual header names its four parameters exactly as formatAuthorization does: no case folding or order check to do.
  if (found.length === 4 && found.every(([name], k) => name === PARAM_ORDER[k])) {
    const [[, username], [, algorithm], [, headers], [, signature]] = found as [[string, string], [string, string], [string, string], [string, string]];
    return { ok: true, params: { username, algorithm, headers, signature } };
  }
  return collectParams(found);
}

/** Leading and trailing spaces and tabs removed (no regex: this runs on every verified request). */
function trimSpaceAndTab(raw: string): string {
  let start = 0;
  let end = raw.length;
  while (start < end && (raw.charCodeAt(start) === 0x20 || raw.charCodeAt(start) === 0x09)) start++;
  while (end > start && (raw.charCodeAt(end - 1) === 0x20 || raw.charCodeAt(end - 1) === 0x09)) end--;
  return start === 0 && end === raw.length ? raw : raw.slice(start, end);
}

/** A parameter name character: A-Z, a-z, 0-9, `_` or `-`. */
function isNameChar(code: number): boolean {
  return (code >= 0x41 && code <= 0x5a) || (code >= 0x61 && code <= 0x7a) || (code >= 0x30 && code <= 0x39) || code === 0x5f || code === 0x2d;
}

function describeAt(value: string, index: number): string {
  const code = value.charCodeAt(index);
  return code >= 0x21 && code <= 0x7e ? `"${value[index]}"` : describeChar(value, index);
}

function collectParams(found: Array<[string, string]>): ParseAuthorizationResult {
  const params: Partial<AuthorizationParams> = {};
  for (const [rawName] of found) {
    const name = rawName.toLowerCase();
    if (!(PARAM_ORDER as readonly string[]).includes(name)) {
      return fail(`unknown parameter ${quoteForMessage(rawName)}; only ${PARAM_ORDER.join(", ")} are allowed`);
    }
    if (params[name as ParamName] !== undefined) return fail(`parameter "${name}" appears more than once`);
    params[name as ParamName] = "";
  }
  const missing = PARAM_ORDER.filter((name) => params[name] === undefined);
  if (missing.length > 0) return fail(`missing parameter${missing.length > 1 ? "s" : ""} ${missing.join(", ")}`);
  const order = found.map(([n]) => n.toLowerCase());
  if (order.some((n, k) => n !== PARAM_ORDER[k])) {
    return fail(`parameters must come in the order ${PARAM_ORDER.join(", ")}; got ${order.join(", ")}`);
  }
  const [username, algorithm, headers, signature] = found.map(([, v]) => v) as [string, string, string, string];
  return { ok: true, params: { username, algorithm, headers, signature } };
}

/** Why a client id cannot be sent as a plain-string, or undefined when it can. */
export function clientIdProblem(clientId: string): string | undefined {
  if (clientId.length === 0) return "the client id is empty";
  const bad = firstNonPlainChar(clientId);
  return bad < 0 ? undefined : `the client id contains ${describeChar(clientId, bad)}`;
}
