import { describe, expect, it } from "vitest";
import { RelcastError } from "../../src/core/errors.js";
import { signRequest } from "../../src/hmac/index.js";
import { authorizationFor, DATE, VECTORS } from "./fixed-vectors.js";

describe("signRequest", () => {
  it.each(VECTORS.map((v) => [v.name, v] as const))("matches the fixed vector: %s", (_name, v) => {
    const signed = signRequest({ clientId: v.clientId, secret: v.secret, method: v.method, url: v.target, date: v.date, ...(v.body === undefined ? {} : { body: v.body }) });
    expect(signed.headers).toEqual({ Date: v.date, ...(v.digest ? { Digest: v.digest } : {}), Authorization: authorizationFor(v.clientId, v.signature) });
    expect(signed.signingString).toBe(`date: ${v.date}\n${v.method} ${v.target} HTTP/1.1`);
  });

  it("emits Date, Digest, Authorization in that order and a Digest only where the spec wants one", () => {
    for (const method of ["POST", "PUT", "PATCH", "DELETE"]) {
      expect(Object.keys(signRequest({ clientId: "c", secret: "secret", method, url: "/" }).headers)).toEqual(["Date", "Digest", "Authorization"]);
    }
    for (const method of ["GET", "HEAD", "OPTIONS"]) {
      expect(Object.keys(signRequest({ clientId: "c", secret: "secret", method, url: "/" }).headers)).toEqual(["Date", "Authorization"]);
    }
    expect(signRequest({ clientId: "c", secret: "secret", method: "GET", url: "/", body: "x" }).headers.Digest).toBeDefined();
  });

  it("upper-cases the method and hashes bytes and strings alike", () => {
    const a = signRequest({ clientId: "c", secret: "secret", method: "post", url: "/x", body: "é", date: DATE });
    const b = signRequest({ clientId: "c", secret: "secret", method: "POST", url: "/x", body: Buffer.from("é", "utf8"), date: DATE });
    expect(a.method).toBe("POST");
    expect(a.headers).toEqual(b.headers);
  });

  it("defaults the Date to now as an IMF-fixdate and formats Date objects", () => {
    const before = Math.floor(Date.now() / 1000) * 1000;
    const date = new Date(signRequest({ clientId: "c", secret: "secret", method: "GET", url: "/" }).headers.Date).getTime();
    expect(date).toBeGreaterThanOrEqual(before);
    expect(signRequest({ clientId: "c", secret: "secret", method: "GET", url: "/", date: new Date(Date.UTC(2025, 0, 7, 10)) }).headers.Date).toBe(DATE);
  });

  it("keeps the query exactly: order, repeats, encoding case, empty values", () => {
    for (const url of ["/a?b=2&a=1", "/a?a=1&a=1", "/a?q=%2f", "/a?q=%2F", "/a?x", "/a?x=", "/a?", "/a?&&", "/a/./b/../c"]) {
      expect(signRequest({ clientId: "c", secret: "secret", method: "GET", url }).requestTarget).toBe(url);
    }
  });

  it("signs what fetch sends for an absolute URL and says when that differs from the text", () => {
    const plain = signRequest({ clientId: "c", secret: "secret", method: "GET", url: "https://gw.example/v2/a/v1/b?x=1#frag" });
    expect(plain.requestTarget).toBe("/v2/a/v1/b?x=1");
    expect(plain.rewrittenFrom).toBeUndefined();
    const odd = signRequest({ clientId: "c", secret: "secret", method: "GET", url: "https://gw.example/a/./b?q=caf\u00e9 x" });
    expect(odd.requestTarget).toBe("/a/b?q=caf%C3%A9%20x");
    expect(odd.rewrittenFrom).toBe("/a/./b?q=caf\u00e9 x");
    expect(signRequest({ clientId: "c", secret: "secret", method: "GET", url: "https://gw.example" }).requestTarget).toBe("/");
  });

  it.each([
    ["a relative path", { url: "v2/a" }, /must start with "\/"/],
    ["a space in the path", { url: "/a b" }, /U\+0020 at column 3; percent-encode/],
    ["non-ASCII in the path", { url: "/caf\u00e9" }, /U\+00E9/],
    ["a fragment", { url: "/a#b" }, /fragments are never sent/],
    ["a quote in the client id", { clientId: 'a"b' }, /clientId.*double quote/],
    ["an empty secret", { secret: "" }, /secret.*is empty/],
    ["a method with a space", { method: "GE T" }, /method.*HTTP method/],
    ["an RFC 850 date", { date: "Sunday, 06-Nov-94 08:49:37 GMT" }, /IMF-fixdate/],
    ["an invalid Date", { date: new Date(Number.NaN) }, /date.*must be a valid Date/],
  ])("refuses %s with E_INPUT", (_name, override, expected) => {
    const call = () => signRequest({ clientId: "c", secret: "secret-value", method: "GET", url: "/", ...override });
    expect(call).toThrow(RelcastError);
    expect(call).toThrow(expected);
    try {
      call();
    } catch (err) {
      expect((err as RelcastError).code).toBe("E_INPUT");
      expect((err as RelcastError).message).not.toContain("secret-value");
    }
  });
});
